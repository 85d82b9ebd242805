//===- InputFile.h - Reading an input file that may be hostile -*- C++ -*-===//
//
// Plans, kernel specs and tuning databases are read from paths a user names:
// a FIFO, a device (/dev/zero) or a directory there must be refused, not read
// until memory runs out or the reader blocks forever, and a regular file is
// read only up to a stated size.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_INPUTFILE_H
#define FP8_CODEGEN_INPUTFILE_H

#include "codegen/Status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace fp8 {

/// The contents of the regular file `path`, of at most `maxBytes` bytes.
/// The file is opened with O_NONBLOCK (opening a FIFO does not wait for a
/// writer) and checked with fstat before anything is read: anything but a
/// regular file is refused, and so is a file larger than `maxBytes`, by its
/// size and again while reading (at most maxBytes + 1 bytes are read, should
/// it grow). `what` names the file's kind in messages ("plan").
Expected<std::string> readInputFile(const std::string &path, int64_t maxBytes,
                                    std::string_view what);

} // namespace fp8

#endif // FP8_CODEGEN_INPUTFILE_H
