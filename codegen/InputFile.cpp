//===- InputFile.cpp - Reading a file named by the user -------------------===//

#include "codegen/InputFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fp8 {

namespace {
const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "a special file";
}
} // namespace

Expected<int> openInputFile(const std::string &path, uint64_t maxBytes,
                            uint64_t &size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errorf("cannot open '", path, "': ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return errorf("cannot stat '", path, "': ", std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return errorf("expected '", path, "' to be a regular file, found ",
                  fileKind(st.st_mode));
  }
  if (uint64_t(st.st_size) > maxBytes) {
    ::close(fd);
    return errorf("expected '", path, "' to hold at most ", maxBytes,
                  " bytes, found ", uint64_t(st.st_size));
  }
  // Reads of a regular file do not block; clear the flag all the same so
  // the caller gets an ordinary descriptor.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  size = uint64_t(st.st_size);
  return fd;
}

Expected<std::string> readInputFile(const std::string &path,
                                    uint64_t maxBytes) {
  uint64_t size = 0;
  auto fd = openInputFile(path, maxBytes, size);
  if (!fd)
    return fd.status();
  std::string text;
  text.reserve(size_t(size));
  char chunk[1 << 16];
  // Read to the end, not to `size`: the file may have grown since fstat, but
  // never past the bound.
  while (true) {
    const ssize_t n = ::read(*fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int e = errno;
      ::close(*fd);
      return errorf("cannot read '", path, "': ", std::strerror(e));
    }
    if (n == 0)
      break;
    text.append(chunk, size_t(n));
    if (text.size() > maxBytes) {
      ::close(*fd);
      return errorf("expected '", path, "' to hold at most ", maxBytes,
                    " bytes, found more");
    }
  }
  ::close(*fd);
  return text;
}

} // namespace fp8
