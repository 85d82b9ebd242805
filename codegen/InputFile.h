//===- InputFile.h - Reading a file named by the user -----------*- C++ -*-===//
//
// Every file a tool or the library reads because a user named it (plans,
// specs, tiles, tuning databases, shape lists, MLIR, .npy) is read here or
// opened with openInputFile: only a regular file, never more than a stated
// size. A directory used to abort a reader (std::__ios_failure), a FIFO to
// hang it at open, /dev/zero to be read until memory ran out.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_INPUTFILE_H
#define FP8_CODEGEN_INPUTFILE_H

#include "codegen/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace fp8 {

/// Opens `path` for reading (O_NONBLOCK, so a FIFO does not block the open)
/// and checks that it is a regular file of at most `maxBytes`. Returns the
/// descriptor (blocking again; the caller closes it) and, in `size`, the
/// file's size.
Expected<int> openInputFile(const std::string &path, uint64_t maxBytes,
                            uint64_t &size);

/// The whole of `path`, a regular file of at most `maxBytes`.
Expected<std::string> readInputFile(const std::string &path, uint64_t maxBytes);

} // namespace fp8

#endif // FP8_CODEGEN_INPUTFILE_H
