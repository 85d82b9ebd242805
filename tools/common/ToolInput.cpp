//===- ToolInput.cpp - How the MLIR tools read untrusted input ------------===//

#include "tools/common/ToolInput.h"

#include "llvm/Support/thread.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mlir::fp8 {

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

/// Reads `fd` to its end, or to one byte past kMaxInputBytes.
bool readAll(int fd, std::string &out, std::string &error,
             llvm::StringRef path) {
  char chunk[1 << 16];
  while (out.size() <= kMaxInputBytes) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n == 0)
      return true;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = (path + ": error: cannot read: " + std::strerror(errno)).str();
      return false;
    }
    out.append(chunk, size_t(n));
  }
  error = (path + ": error: expected at most " + llvm::Twine(kMaxInputBytes >> 20) +
           " MiB of input, found more")
              .str();
  return false;
}
} // namespace

std::unique_ptr<llvm::MemoryBuffer> readToolInput(llvm::StringRef path,
                                                  std::string &error) {
  std::string text;
  if (path == "-") {
    if (!readAll(STDIN_FILENO, text, error, "<stdin>"))
      return nullptr;
    return llvm::MemoryBuffer::getMemBufferCopy(text, "<stdin>");
  }
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
  // below, as are devices (/dev/zero never ends) and directories.
  const std::string name = path.str();
  int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = name + ": error: cannot open: " + std::strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = name + ": error: expected a regular file (or - for standard input), " +
            "found " + fileKind(st.st_mode);
    ::close(fd);
    return nullptr;
  }
  if (uint64_t(st.st_size) > kMaxInputBytes) {
    error = name + ": error: expected at most " +
            std::to_string(kMaxInputBytes >> 20) + " MiB of input, found " +
            std::to_string(st.st_size) + " bytes";
    ::close(fd);
    return nullptr;
  }
  text.reserve(size_t(st.st_size));
  const bool ok = readAll(fd, text, error, path);
  ::close(fd);
  if (!ok)
    return nullptr;
  return llvm::MemoryBuffer::getMemBufferCopy(text, name);
}

std::optional<NestingViolation> findExcessNesting(llvm::StringRef text,
                                                  unsigned maxDepth) {
  unsigned depth = 0, line = 1, column = 1;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i, ++column) {
    const char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      column = 0;
      break;
    case '"':
      // A string: brackets inside do not nest. An escaped quote does not end
      // it; MLIR strings do not span lines.
      for (++i, ++column; i < n && text[i] != '"' && text[i] != '\n';
           ++i, ++column)
        if (text[i] == '\\' && i + 1 < n && text[i + 1] != '\n') {
          ++i;
          ++column;
        }
      if (i < n && text[i] == '\n') {
        ++line;
        column = 0;
      }
      break;
    case '/':
      if (i + 1 < n && text[i + 1] == '/') {
        while (i < n && text[i] != '\n')
          ++i;
        ++line;
        column = 0;
      }
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > maxDepth)
        return NestingViolation{line, column};
      break;
    case '>':
      // `->` (function types, affine maps) and `>=` (integer sets) close
      // nothing.
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < n && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

std::string checkToolInput(llvm::StringRef path,
                           const llvm::MemoryBuffer &buffer) {
  llvm::StringRef text = buffer.getBuffer();
  if (text.starts_with("ML\xEFR"))
    return (path + ": error: expected MLIR text, found MLIR bytecode (the "
                   "fp8 tools read text only)")
        .str();
  if (auto at = findExcessNesting(text, kMaxNestingDepth))
    return (path + ":" + llvm::Twine(at->line) + ":" + llvm::Twine(at->column) +
            ": error: expected brackets nested at most " +
            llvm::Twine(kMaxNestingDepth) + " deep, found deeper nesting")
        .str();
  return "";
}

int runOnToolStack(llvm::function_ref<int()> body) {
  int result = 1;
  llvm::thread worker(std::optional<unsigned>(kToolStackBytes),
                      [&] { result = body(); });
  worker.join();
  return result;
}

} // namespace mlir::fp8
