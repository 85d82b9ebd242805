//===- ToolInput.cpp - How the MLIR tools read untrusted input ------------===//

#include "tools/common/ToolInput.h"

#include "core/InputFile.h"

#include "llvm/Support/thread.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace mlir::fp8 {

namespace {
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
  error = (path + ": error: expected at most " +
           llvm::Twine(kMaxInputBytes >> 20) + " MiB of input, found more")
              .str();
  return false;
}
} // namespace

std::unique_ptr<llvm::MemoryBuffer> readToolInput(llvm::StringRef path,
                                                  std::string &error) {
  if (path == "-") {
    std::string text;
    if (!readAll(STDIN_FILENO, text, error, "<stdin>"))
      return nullptr;
    return llvm::MemoryBuffer::getMemBufferCopy(text, "<stdin>");
  }
  auto text = ::fp8::readInputFile(path.str(), kMaxInputBytes, "input");
  if (!text) {
    error = "error: " + text.message();
    return nullptr;
  }
  return llvm::MemoryBuffer::getMemBufferCopy(*text, path);
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
