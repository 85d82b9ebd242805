//===- PlanCompileTest.cpp - A plan's kernels as its GPU launches them ----===//
//
// compilePlanKernels (runtime/plan/PlanExecutor.h) on the CPU, through NVRTC:
// told the GPU the plan will run on, a GEMM step with a compiled-in tile
// compiles the tuning database's tile for that GPU, as GpuPlan launches it,
// and says so; another GPU's entry, and no GPU at all, leave the plan's
// tile. Before, fp8-run listed (and compiled) the plan's kernel while the
// step launched the database's.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanExecutor.h"

#include "codegen/Gemm.h"
#include "codegen/TuningDb.h"
#include "runtime/Gemm.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

using namespace fp8;

namespace {

/// The mlp example as compiled with the default m-hint: each GEMM step
/// launches its recorded tile (the heuristic's for M = 4096). The committed
/// plan leaves the tile to the runtime (m-hint=0) and records that same
/// tile.
Expected<Plan> mlpWithCompiledInTiles() {
  auto plan = loadPlan(FP8_EXAMPLE_PLANS "/mlp.sm_90a.plan.json");
  if (plan)
    for (PlanStep &s : plan->steps)
      if (s.kind == StepKind::Gemm) {
        EXPECT_TRUE(s.runtimeTile) << s.name;
        s.runtimeTile = false;
        s.tileSource = "heuristic for M = 4096 (m-hint), 132 SMs";
      }
  return plan;
}

const PlanStep *stepNamed(const Plan &plan, const std::string &name) {
  for (const PlanStep &s : plan.steps)
    if (s.name == name)
      return &s;
  return nullptr;
}

TuningDevice gpu(const std::string &name) {
  TuningDevice d;
  d.name = name;
  d.smCount = 132;
  return d;
}

/// step -> (kernel, tile source) of the mlp example's kernels at M = 256.
std::map<std::string, std::pair<std::string, std::string>>
compiled(const Plan &plan, const ResolvedPlan &shapes,
         const TuningDevice *device) {
  auto ks = compilePlanKernels(plan, shapes, 132, device);
  EXPECT_TRUE(ks.isOk()) << ks.message();
  std::map<std::string, std::pair<std::string, std::string>> out;
  if (ks)
    for (const CompiledPlanKernel &k : *ks)
      out[k.step] = {k.name, k.tileSource};
  return out;
}

TEST(PlanCompile, GemmStepsTakeTheDatabaseTileOfTheirGpu) {
  auto plan = mlpWithCompiledInTiles();
  ASSERT_TRUE(plan.isOk()) << plan.message();
  auto dims = resolveDims(*plan, {{"M", 256}});
  ASSERT_TRUE(dims.isOk()) << dims.message();
  auto shapes = resolvePlan(*plan, *dims);
  ASSERT_TRUE(shapes.isOk()) << shapes.message();
  const PlanStep *gate = stepNamed(*plan, "gemm_4");
  ASSERT_NE(gate, nullptr);
  ASSERT_FALSE(gate->runtimeTile);

  // An H100 entry for the gate projection's problem (N 11008, K 4096, the
  // M bucket of 256) with another tile than the plan's.
  TuningEntry e;
  e.spec = gate->gemm;
  e.spec.m = 256;
  e.spec.tile.blockM = 128;
  e.spec.tile.mathWarpgroups = 2;
  e.spec.tile.clusterN = 2;
  ASSERT_TRUE(checkGemmSpec(e.spec).isOk());
  ASSERT_NE(e.spec.kernelName(), gate->kernelName());
  e.device = gpu("NVIDIA H100 80GB HBM3");
  e.generator = tuningGeneratorVersion();
  e.note = "PlanCompileTest";
  const std::string db =
      (std::filesystem::temp_directory_path() / "fp8-plan-compile-db.json")
          .string();
  std::filesystem::remove(db);
  ASSERT_TRUE(TuningDb::update(db, {e}).isOk());
  ASSERT_TRUE(setTuningDatabase(db).isOk());

  const TuningDevice h100 = gpu("NVIDIA H100 80GB HBM3");
  const TuningDevice h200 = gpu("NVIDIA H200");
  auto onH100 = compiled(*plan, *shapes, &h100);
  auto onH200 = compiled(*plan, *shapes, &h200);
  auto onCpu = compiled(*plan, *shapes, nullptr);
  ASSERT_TRUE(setTuningDatabase("").isOk());
  std::filesystem::remove(db);
  std::filesystem::remove(db + ".lock");

  // gemm_4 and gemm_5 (the up projection: the same problem) take the entry;
  // the down projection (N 4096, K 11008) has none and keeps the plan's.
  EXPECT_EQ(onH100["gemm_4"].first, e.spec.kernelName());
  EXPECT_EQ(onH100["gemm_4"].second, "tuning database");
  EXPECT_EQ(onH100["gemm_5"].first, e.spec.kernelName());
  EXPECT_EQ(onH100["gemm_7"].first, stepNamed(*plan, "gemm_7")->kernelName());
  EXPECT_EQ(onH100["gemm_7"].second, "");
  for (auto *run : {&onH200, &onCpu}) {
    EXPECT_EQ((*run)["gemm_4"].first, gate->kernelName());
    EXPECT_EQ((*run)["gemm_4"].second, "");
  }
  // The other steps are the plan's either way.
  EXPECT_EQ(onH100["quantize_6"], onCpu["quantize_6"]);
}

} // namespace
