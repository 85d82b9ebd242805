//===- PlanCompileTest.cpp - A plan's kernels as its GPU launches them ----===//
//
// compilePlanKernels (runtime/plan/PlanExecutor.h) on the CPU, through NVRTC:
// told the GPU the plan will run on, a GEMM step with a compiled-in tile
// compiles the tuning database's tile for that GPU, as GpuPlan launches it,
// and says so; another GPU's entry, and no GPU at all, leave the plan's
// tile. Before, fp8-run listed (and compiled) the plan's kernel while the
// step launched the database's. A compiled-in heuristic tile that the
// runtime's heuristic would not pick for the actual M (a plan compiled at
// an m-hint, run at a decode's M) names the kernel the runtime would pick.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanExecutor.h"

#include "codegen/Gemm.h"
#include "codegen/Sm90Gemm.h"
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
        s.tileSource = std::string(kHeuristicTileSource) +
                       " for M = 4096 (m-hint), 132 SMs";
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
  // Elsewhere the plan's tile: 192 rows, which leave M = 256's last tile
  // ragged, so the launch loads its tail-box variant (sm90TailBox).
  KernelSpec planned = gate->gemm;
  planned.m = 256;
  ASSERT_TRUE(sm90TailBox(planned, planned.m));
  const std::string plannedKernel =
      sm90KernelName(planned, sm90ScaleTmaOperands(planned), true);
  EXPECT_EQ(plannedKernel, gate->kernelName() + "_tail");
  for (auto *run : {&onH200, &onCpu}) {
    EXPECT_EQ((*run)["gemm_4"].first, plannedKernel);
    EXPECT_EQ((*run)["gemm_4"].second, "");
  }
  // The other steps are the plan's either way.
  EXPECT_EQ(onH100["quantize_6"], onCpu["quantize_6"]);
}

/// Each GEMM step's launched tile and heuristicTile at M = `m`.
std::map<std::string, std::pair<TileConfig, std::optional<TileConfig>>>
gemmTiles(const Plan &plan, int64_t m) {
  std::map<std::string, std::pair<TileConfig, std::optional<TileConfig>>> out;
  auto dims = resolveDims(plan, {{"M", m}});
  EXPECT_TRUE(dims.isOk()) << dims.message();
  if (!dims)
    return out;
  auto shapes = resolvePlan(plan, *dims);
  EXPECT_TRUE(shapes.isOk()) << shapes.message();
  if (!shapes)
    return out;
  auto ks = compilePlanKernels(plan, *shapes, 132, nullptr);
  EXPECT_TRUE(ks.isOk()) << ks.message();
  if (ks)
    for (const CompiledPlanKernel &k : *ks)
      if (k.step.rfind("gemm_", 0) == 0) {
        EXPECT_TRUE(k.tile.has_value()) << k.step;
        out[k.step] = {k.tile.value_or(TileConfig{}), k.heuristicTile};
      }
  return out;
}

TEST(PlanCompile, NamesTheRuntimeTileWhereTheCompiledInOneDiffers) {
  auto runtime = loadPlan(FP8_EXAMPLE_PLANS "/mlp.sm_90a.plan.json");
  ASSERT_TRUE(runtime.isOk()) << runtime.message();
  auto hinted = mlpWithCompiledInTiles();
  ASSERT_TRUE(hinted.isOk()) << hinted.message();

  // At a decode's M the runtime-tile plan compiles the heuristic's tile for
  // 16 rows; the hinted plan compiles its own and names that one.
  const auto rt16 = gemmTiles(*runtime, 16);
  const auto hinted16 = gemmTiles(*hinted, 16);
  ASSERT_EQ(rt16.size(), 3u);
  ASSERT_EQ(hinted16.size(), 3u);
  for (const auto &[step, k] : hinted16) {
    EXPECT_EQ(k.first, stepNamed(*hinted, step)->gemm.tile) << step;
    ASSERT_TRUE(k.second.has_value()) << step;
    EXPECT_EQ(*k.second, rt16.at(step).first) << step;
    EXPECT_NE(*k.second, k.first) << step;
    EXPECT_FALSE(rt16.at(step).second.has_value()) << step;
  }
  // At the hint's M both launch the same tile, and nothing is named.
  const auto rt4096 = gemmTiles(*runtime, 4096);
  for (const auto &[step, k] : gemmTiles(*hinted, 4096)) {
    EXPECT_EQ(k.first, rt4096.at(step).first) << step;
    EXPECT_FALSE(k.second.has_value()) << step;
  }
  // A tile from the plan's tuning database is not the heuristic's: never
  // named.
  for (PlanStep &s : hinted->steps)
    s.tileSource = "tuning-db: exact 4096x11008x4096";
  for (const auto &[step, k] : gemmTiles(*hinted, 16))
    EXPECT_FALSE(k.second.has_value()) << step;
}

} // namespace
