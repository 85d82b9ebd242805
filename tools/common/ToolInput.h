//===- ToolInput.h - How the MLIR tools read their input --------*- C++ -*-===//
//
// fp8-opt and fp8-translate read their input through these functions, so
// that neither can be crashed by its input:
//  - only a regular file (core/InputFile.h) or standard input ("-") is
//    read, at most kMaxInputBytes of it (a directory, a device such as
//    /dev/zero or a FIFO is refused by name);
//  - MLIR bytecode is refused (the tools read text; the bytecode reader has
//    no nesting bound of its own);
//  - text nested deeper than kMaxNestingDepth brackets is refused before the
//    parser sees it: MLIR's recursive-descent parser takes a few KiB of
//    stack per level, so without a bound a few thousand nested `module {`,
//    `[`, `{`, `tensor<` or `(` overflow any stack;
//  - parsing and the passes run on a thread of kToolStackBytes, which holds
//    kMaxNestingDepth levels with a wide margin (also under ASan, whose
//    frames are larger).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_COMMON_TOOLINPUT_H
#define FP8_TOOLS_COMMON_TOOLINPUT_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace mlir::fp8 {

/// The largest input the MLIR tools read (256 MiB; the 1000-matmul model of
/// test/models is under 2 MiB).
inline constexpr size_t kMaxInputBytes = size_t(256) << 20;
/// The deepest bracket nesting the MLIR tools accept; IR the pipeline makes
/// nests fewer than 20 levels.
inline constexpr unsigned kMaxNestingDepth = 1000;
/// The stack of the thread that parses, runs passes and prints.
inline constexpr unsigned kToolStackBytes = 512u << 20;

/// Reads `path` ("-": standard input). On failure returns null and sets
/// `error` to a message naming the path, what was expected and what was
/// found.
std::unique_ptr<llvm::MemoryBuffer> readToolInput(llvm::StringRef path,
                                                  std::string &error);

/// Where text first nests deeper than `maxDepth`.
struct NestingViolation {
  unsigned line = 0, column = 0; ///< 1-based, of the opening bracket
};
/// Counts `(`, `[`, `{` and `<` (not in strings or `//` comments; `->` and
/// `>=` do not close a `<`) and returns where the depth first exceeds
/// `maxDepth`, if it does. The count over-approximates the parser's
/// recursion, never under-approximates it.
std::optional<NestingViolation> findExcessNesting(llvm::StringRef text,
                                                  unsigned maxDepth);

/// The checks of the header comment on a buffer read by readToolInput: ""
/// when the tools may parse it, else a diagnostic
/// ("<path>:<line>:<col>: error: ...").
std::string checkToolInput(llvm::StringRef path,
                           const llvm::MemoryBuffer &buffer);

/// Runs `body` on a thread with a stack of kToolStackBytes and returns its
/// result.
int runOnToolStack(llvm::function_ref<int()> body);

} // namespace mlir::fp8

#endif // FP8_TOOLS_COMMON_TOOLINPUT_H
