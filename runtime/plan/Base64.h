//===- Base64.h - base64 (RFC 4648) for a plan's constant data ------------===//
//
// A plan stores the elements of its constant buffers as base64 text in the
// buffer's "data" key; these are the encoder and the strict decoder of it.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLAN_BASE64_H
#define FP8_RUNTIME_PLAN_BASE64_H

#include "core/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fp8 {

/// base64 (RFC 4648) for constant data.
std::string base64Encode(const std::vector<uint8_t> &data);
Expected<std::vector<uint8_t>> base64Decode(const std::string &text);

} // namespace fp8

#endif // FP8_RUNTIME_PLAN_BASE64_H
