//===- ShapeFile.cpp - fp8-bench's shapes ---------------------------------===//

#include "tools/fp8-bench/ShapeFile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace fp8::bench {

namespace {

/// Whether --m and --only keep `sh`.
bool selected(const Options &opt, const Shape &sh) {
  if (!opt.ms.empty() &&
      std::find(opt.ms.begin(), opt.ms.end(), sh.m) == opt.ms.end())
    return false;
  if (!opt.only.empty()) {
    std::ostringstream os;
    os << sh.m << "x" << sh.n << "x" << sh.k;
    if (os.str() != opt.only)
      return false;
  }
  return true;
}

} // namespace

ShapeFile readShapeFile(const Options &opt) {
  Expected<ShapeFile> file = fp8::readShapeFile(opt.shapes);
  if (!file) {
    std::fprintf(stderr, "fp8-bench: %s\n", file.message().c_str());
    std::exit(2);
  }
  ShapeFile out = std::move(*file);
  out.dense.erase(
      std::remove_if(out.dense.begin(), out.dense.end(),
                     [&](const Shape &sh) { return !selected(opt, sh); }),
      out.dense.end());
  return out;
}

} // namespace fp8::bench
