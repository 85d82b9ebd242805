//===- EwProgramJson.h - Programs as JSON values ----------------*- C++ -*-===//
//
// The JSON value of a program, for the readers and writers that embed one in
// a larger document (a quantize or elementwise kernel spec, a GEMM's
// epilogue). Kept apart from EwProgram.h so that its includers need not see
// nlohmann/json.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CORE_EWPROGRAMJSON_H
#define FP8_CORE_EWPROGRAMJSON_H

#include "core/EwProgram.h"

#include <nlohmann/json.hpp>

namespace fp8 {

/// {"inputs": [...], "ops": [...], "result": ..., "broadcast": [...]}.
nlohmann::json ewProgramToJson(const EwProgram &p);
/// The program of a JSON value, checked (checkProgram); errors name the
/// field.
Expected<EwProgram> ewProgramFromJson(const nlohmann::json &j);

} // namespace fp8

#endif // FP8_CORE_EWPROGRAMJSON_H
