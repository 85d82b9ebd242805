//===- InputFile.cpp - Reading an input file that may be hostile ----------===//

#include "core/InputFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fp8 {

const char *fileTypeName(unsigned mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

OpenFile::~OpenFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

Expected<OpenFile> openInputFile(const std::string &path, int64_t maxBytes,
                                 std::string_view what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errorf("cannot read ", what, " '", path,
                  "': ", std::strerror(errno));
  OpenFile f(fd, 0);
  struct stat st;
  if (::fstat(f.fd(), &st) != 0)
    return errorf("cannot read ", what, " '", path,
                  "': ", std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return errorf("expected ", what, " '", path,
                  "' to be a regular file, found ", fileTypeName(st.st_mode));
  if (int64_t(st.st_size) > maxBytes)
    return errorf("expected ", what, " '", path, "' to be at most ", maxBytes,
                  " bytes, found ", int64_t(st.st_size));
  return OpenFile(f.release(), uint64_t(st.st_size));
}

Expected<std::string> readInputFile(const std::string &path, int64_t maxBytes,
                                    std::string_view what) {
  auto opened = openInputFile(path, maxBytes, what);
  if (!opened)
    return opened.status();
  const int fd = opened->fd();
  std::string text;
  text.resize(size_t(opened->size()));
  size_t have = 0;
  // One byte beyond the cap tells a file that grew past it.
  const size_t limit = size_t(maxBytes) + 1;
  while (have < limit) {
    if (have == text.size())
      text.resize(std::min(limit, std::max<size_t>(2 * have, 4096)));
    const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return errorf("cannot read ", what, " '", path,
                    "': ", std::strerror(errno));
    }
    if (n == 0)
      break;
    have += size_t(n);
  }
  if (have > size_t(maxBytes))
    return errorf("expected ", what, " '", path, "' to be at most ", maxBytes,
                  " bytes, found more (it grew while being read)");
  text.resize(have);
  return text;
}

} // namespace fp8
