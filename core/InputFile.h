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

#include "core/Status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace fp8 {

/// "a directory", "a FIFO", "a character device", ... for a file type
/// (st_mode) that is not a regular file.
const char *fileTypeName(unsigned mode);

/// An open regular file, closed when destroyed.
class OpenFile {
public:
  OpenFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  OpenFile(OpenFile &&o) noexcept : fd_(o.fd_), size_(o.size_) { o.fd_ = -1; }
  OpenFile(const OpenFile &) = delete;
  OpenFile &operator=(const OpenFile &) = delete;
  OpenFile &operator=(OpenFile &&) = delete;
  ~OpenFile();
  int fd() const { return fd_; }
  /// The size when it was opened.
  uint64_t size() const { return size_; }
  /// Gives up the descriptor (the caller closes it).
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

private:
  int fd_;
  uint64_t size_;
};

/// Opens `path` for reading with the checks of readInputFile (a regular
/// file, at most `maxBytes` when it is opened), for readers that take the
/// file in parts (.npy: the header before the data).
Expected<OpenFile> openInputFile(const std::string &path, int64_t maxBytes,
                                 std::string_view what);

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
