//===- JsonInput.h - Parsing JSON that comes from outside -------*- C++ -*-===//
//
// Plans, kernel specs, tiles, tuning databases and shape lists are JSON a
// user hands us. nlohmann::json parses iteratively, but copying, dumping,
// comparing and destroying a value recurse once per level: a spec nested
// 200,000 arrays deep overflowed the stack (SIGSEGV) in dump(). Every such
// text is parsed here, which refuses nesting deeper than kMaxJsonDepth
// before building anything.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_JSONINPUT_H
#define FP8_CODEGEN_JSONINPUT_H

#include "core/Status.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace fp8 {

/// The deepest nesting of arrays and objects accepted; plans nest 6 deep.
inline constexpr int kMaxJsonDepth = 64;

/// `text` as JSON, or an error naming `what` (e.g. "plan 'p.json'"): not
/// JSON, or nested deeper than kMaxJsonDepth.
Expected<nlohmann::json> parseJsonInput(std::string_view text,
                                        const std::string &what);

} // namespace fp8

#endif // FP8_CODEGEN_JSONINPUT_H
