//===- fp8-bench.cpp - Our kernels next to cuBLASLt, same inputs ----------===//
//
// For every shape of bench/shapes.json: the generated sm_90a kernel with the
// DeepSeek recipe (1x128 activations, 128x128 weights, promotion every 128)
// against cuBLASLt FP8 block-scaled (the same recipe), cuBLASLt FP8
// per-tensor and cuBLASLt BF16, on the same data in one process. Kernel time
// from CUDA events around each launch, L2 flushed before every launch,
// median of --iters runs. Prints a table (TFLOP/s, % of roofline, ratios),
// writes JSON, and reports JIT figures (cold compile, disk-cache load,
// in-memory dispatch).
//
//===----------------------------------------------------------------------===//

#include "tools/fp8-bench/Bench.h"
#include "tools/fp8-bench/Grouped.h"
#include "tools/fp8-bench/JitFigures.h"
#include "tools/fp8-bench/Measure.h"
#include "tools/fp8-bench/MemoryBound.h"
#include "tools/fp8-bench/Options.h"
#include "tools/fp8-bench/Report.h"
#include "tools/fp8-bench/ShapeFile.h"

#include "core/Env.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

using namespace fp8;
using namespace fp8::bench;
using json = nlohmann::json;

int main(int argc, char **argv) {
  Options opt = parseArgs(argc, argv);
  // The code generator and the runtime both read it (before any compile).
  if (opt.trace)
    setenv("FP8_KERNEL_TRACE", "1", 1);
  if (Status env = env::checkEnvironment(); !env) {
    std::fprintf(stderr, "fp8-bench: %s\n", env.message().c_str());
    return 2;
  }
  if (opt.memoryBound) {
    Context ctx(opt);
    json out = runMemoryBound(ctx);
    out["device"] = ctx.dev->name;
    out["sms"] = ctx.dev->smCount;
    if (!opt.jsonOut.empty())
      std::ofstream(opt.jsonOut) << out.dump(2) << "\n";
    return out["failures"].get<int>() == 0 ? 0 : 1;
  }
  const ShapeFile file = readShapeFile(opt);
  if (opt.grouped) {
    Context ctx(opt);
    json out = runGrouped(ctx, file);
    out["device"] = ctx.dev->name;
    out["sms"] = ctx.dev->smCount;
    if (!opt.jsonOut.empty())
      std::ofstream(opt.jsonOut) << out.dump(2) << "\n";
    return 0;
  }
  Context ctx(opt);

  json jsonRows = json::array();
  std::vector<Row> rows;
  for (const Shape &sh : file.dense) {
    json sweep;
    rows.push_back(measureShape(ctx, sh, sweep));
    jsonRows.push_back(reportRow(rows.back(), file, sweep));
  }
  json summary = reportSummary(rows);

  // JIT figures on the first shape's kernel, and every kernel's cold
  // compile.
  json jit = json::object();
  if (opt.jit && !file.dense.empty())
    jit = jitFigures(ctx.recipe, file.dense, ctx.dev->smCount, *ctx.d,
                     ctx.stream);

  if (!opt.jsonOut.empty())
    std::ofstream(opt.jsonOut)
        << benchJson(opt, ctx.dev->name, ctx.dev->smCount, file, jsonRows,
                     summary, jit)
               .dump(2)
        << "\n";
  return 0;
}
