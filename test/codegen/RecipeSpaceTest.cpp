//===- RecipeSpaceTest.cpp - Every recipe runs as stated or is refused ----===//
//
// The whole recipe space of codegen/RecipeSpace.h, on each target: a point
// the dialect's verifier accepts (checkGemmRecipe) either passes the
// target's recipe rules (checkTargetRecipe, what --fp8-verify-target runs)
// and then generates, with the heuristic's tile, a kernel whose constants
// are the recipe's; or it is refused there with a message of what the
// target expects. No accepted recipe may fail later or run as something
// else (an interval of 160 generated as 128, say).
//
//===----------------------------------------------------------------------===//

#include "codegen/RecipeSpace.h"
#include "codegen/Gemm.h"
#include "codegen/Sm100Gemm.h"
#include "core/RecipeRules.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

using namespace fp8;

namespace {

constexpr int64_t kM = 256, kN = 512, kK = 1536;

bool has(const std::string &src, const std::string &what) {
  return src.find(what) != std::string::npos;
}

std::string boolText(bool b) { return b ? "true" : "false"; }

const char *scaleModeName(const Granularity &g) {
  if (g.cols != Granularity::kWhole)
    return "kScaleK";
  return g.rows == Granularity::kWhole ? "kScaleTensor" : "kScaleOuter";
}

/// The constants of `src` that the recipe fixes; "" when all match.
std::string mismatch(const KernelSpec &s, const std::string &src) {
  const bool f32 = s.out == DType::F32;
  // sm_100a applies every scale as a block scale of the MMA once any of
  // them varies along K (a constant one repeated per block).
  const bool blocks =
      s.arch == Arch::SM100a && (s.a.granularity.cols != Granularity::kWhole ||
                                 s.b.granularity.cols != Granularity::kWhole);
  const std::string modeA = blocks ? "kScaleK" : scaleModeName(s.a.granularity);
  const std::string modeB = blocks ? "kScaleK" : scaleModeName(s.b.granularity);
  std::vector<std::string> want = {
      "kOutF32 = " + boolText(f32) + ";", "kSaMode = " + modeA + ";",
      "kSbMode = " + modeB + ";",
      "kSaE8 = " + boolText(s.a.granularity.scale == ScaleFormat::UE8M0) + ";",
      "kSbE8 = " + boolText(s.b.granularity.scale == ScaleFormat::UE8M0) + ";"};
  auto ptx = [](DType t) { return t == DType::E5M2 ? "e5m2" : "e4m3"; };
  if (s.arch == Arch::SM90a) {
    want.push_back("kPromoSteps = " +
                   std::to_string(promotionToInt(s.promotionInterval) / 32) +
                   ";");
    want.push_back(std::string("k32.f32.") + ptx(s.a.format) + "." +
                   ptx(s.b.format) + " {");
  } else {
    char idesc[32];
    std::snprintf(idesc, sizeof(idesc), "kIdesc = 0x%xu;",
                  unsigned(sm100InstrDesc(s)));
    want.push_back(idesc);
    const bool a_e5m2 = (sm100InstrDesc(s) >> 7 & 7u) == 1u;
    const bool b_e5m2 = (sm100InstrDesc(s) >> 10 & 7u) == 1u;
    if (a_e5m2 != (s.a.format == DType::E5M2) ||
        b_e5m2 != (s.b.format == DType::E5M2))
      return "the instruction descriptor's formats";
  }
  for (const std::string &w : want)
    if (!has(src, w))
      return w;
  return "";
}

struct Tally {
  int64_t refusedByDialect = 0, refusedByTarget = 0, accepted = 0;
  std::map<std::string, int64_t> classes; ///< accepted points per class
  std::set<std::string> messages;         ///< the target's refusals
};

Tally walk(Arch arch, int smCount) {
  Tally t;
  for (const RecipePoint &p : recipeSpace()) {
    if (!checkGemmRecipe(p.a, p.b, p.promotionInterval, p.out)) {
      ++t.refusedByDialect;
      continue;
    }
    const RecipePoint k = kMajorView(p);
    KernelSpec spec = recipeSpec(k, arch, kM, kN, kK);
    Status st = checkTargetRecipe(spec);
    if (!st) {
      ++t.refusedByTarget;
      EXPECT_EQ(st.message().rfind("expected ", 0), 0u)
          << describe(p) << ": " << st.message();
      t.messages.insert(st.message());
      continue;
    }
    ++t.accepted;
    ++t.classes[recipeClass(k)];
    spec.tile = selectConfig(spec, smCount).tile;
    Status full = checkGemmSpec(spec);
    EXPECT_TRUE(full.isOk())
        << "accepted by " << toString(arch) << "'s recipe rules but not "
        << "generated: " << describe(p) << ": " << full.message();
    if (!full)
      continue;
    Expected<GeneratedKernel> g = emitGemm(spec);
    EXPECT_TRUE(g.isOk()) << describe(p) << ": " << g.message();
    if (!g)
      continue;
    const std::string bad = mismatch(spec, g->source);
    EXPECT_EQ(bad, "") << describe(p) << ": the kernel lacks '" << bad << "'";
  }
  std::printf("%s: %lld points refused by the dialect, %lld by the target "
              "(%zu distinct messages), %lld accepted in %zu classes\n",
              std::string(toString(arch)).c_str(),
              (long long)t.refusedByDialect, (long long)t.refusedByTarget,
              t.messages.size(), (long long)t.accepted, t.classes.size());
  return t;
}

RecipePoint point(Granularity ga, Granularity gb, std::optional<int64_t> p,
                  DType out = DType::BF16) {
  RecipePoint r;
  r.a.granularity = ga;
  r.b.granularity = gb;
  r.promotionInterval = p;
  r.out = out;
  return r;
}

bool acceptedOn(Arch arch, const RecipePoint &p) {
  return checkGemmRecipe(p.a, p.b, p.promotionInterval, p.out) &&
         checkTargetRecipe(recipeSpec(kMajorView(p), arch, kM, kN, kK));
}

} // namespace

TEST(RecipeSpace, AxesAreTheDialects) {
  const RecipeAxes &ax = recipeAxes();
  EXPECT_EQ(ax.formats.size(), 2u);
  EXPECT_EQ(ax.scaleFormats.size(), 3u);
  EXPECT_EQ(ax.layouts.size(), 2u);
  EXPECT_EQ(ax.outs.size(), 3u);
  EXPECT_EQ(recipeSpace().size(),
            size_t(4 * ax.blocks.size() * ax.blocks.size() * 9 * 4 *
                   ax.intervals.size() * 3));
}

TEST(RecipeSpace, Sm90EveryAcceptedRecipeRunsAsStated) {
  const Tally t = walk(Arch::SM90a, 132);
  EXPECT_GT(t.accepted, 1000);
  EXPECT_GT(t.refusedByTarget, 0);
  for (const auto &[cls, n] : t.classes)
    std::printf("  %-70s %lld\n", cls.c_str(), (long long)n);
}

TEST(RecipeSpace, Sm100EveryAcceptedRecipeRunsAsStated) {
  const Tally t = walk(Arch::SM100a, 148);
  EXPECT_GT(t.accepted, 100);
  EXPECT_GT(t.refusedByTarget, 0);
}

TEST(RecipeSpace, TheSampleHoldsEveryAcceptedClass) {
  for (Arch arch : {Arch::SM90a, Arch::SM100a}) {
    std::set<std::string> classes, sampled;
    for (const RecipePoint &p : recipeSpace())
      if (acceptedOn(arch, p))
        classes.insert(recipeClass(kMajorView(p)));
    std::set<std::pair<DType, DType>> formats;
    for (const RecipePoint &p : recipeSample(arch)) {
      EXPECT_TRUE(acceptedOn(arch, p)) << describe(p);
      EXPECT_TRUE(sampled.insert(recipeClass(p)).second) << describe(p);
      formats.insert({p.a.format, p.b.format});
    }
    EXPECT_EQ(sampled, classes) << toString(arch);
    EXPECT_EQ(formats.size(), 4u) << toString(arch);
    std::printf("%s: %zu classes sampled\n",
                std::string(toString(arch)).c_str(), sampled.size());
  }
}

TEST(RecipeSpace, KnownPointsLandWhereTheyShould) {
  const Granularity tok = Granularity::block(1, 128);
  const Granularity blk = Granularity::block(128, 128);
  const Granularity pt = Granularity::perTensor();
  const Granularity mx = Granularity::block(1, 32, ScaleFormat::UE8M0);
  // sm_90a: DeepSeek, per-tensor at every interval, no MX, no f16.
  EXPECT_TRUE(acceptedOn(Arch::SM90a, point(tok, blk, 128)));
  for (int64_t p : {32, 64, 96, 128, 160, 192, 256, 384, 512})
    EXPECT_TRUE(acceptedOn(Arch::SM90a, point(pt, pt, p))) << p;
  EXPECT_TRUE(acceptedOn(Arch::SM90a, point(pt, pt, std::nullopt)));
  EXPECT_FALSE(acceptedOn(Arch::SM90a, point(mx, mx, std::nullopt)));
  EXPECT_FALSE(acceptedOn(Arch::SM90a, point(tok, blk, 96)));
  EXPECT_FALSE(acceptedOn(Arch::SM90a, point(pt, pt, 128, DType::F16)));
  // sm_100a: MX, power-of-two DeepSeek at 32, per-tensor unpromoted.
  EXPECT_TRUE(acceptedOn(Arch::SM100a, point(mx, mx, std::nullopt)));
  const Granularity tok2 = Granularity::block(1, 128, ScaleFormat::F32Pow2);
  const Granularity blk2 = Granularity::block(128, 128, ScaleFormat::F32Pow2);
  EXPECT_TRUE(acceptedOn(Arch::SM100a, point(tok2, blk2, 32)));
  EXPECT_FALSE(acceptedOn(Arch::SM100a, point(tok, blk, 32)));
  EXPECT_FALSE(acceptedOn(Arch::SM100a, point(pt, pt, 128)));
  EXPECT_TRUE(acceptedOn(Arch::SM100a, point(pt, pt, std::nullopt)));
}
