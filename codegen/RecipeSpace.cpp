//===- RecipeSpace.cpp - The space of dense GEMM recipes, enumerated ------===//

#include "codegen/RecipeSpace.h"

#include "codegen/Gemm.h"
#include "core/RecipeRules.h"

#include <map>

#include <sstream>

namespace fp8 {

const RecipeAxes &recipeAxes() {
  constexpr int64_t W = Granularity::kWhole;
  static const RecipeAxes axes{
      {DType::E4M3FN, DType::E5M2},
      {{W, W},
       {1, W},
       {W, 1},
       {1, 128},
       {128, 1},
       {128, 128},
       {1, 32},
       {32, 1},
       {1, 64},
       {1, 256},
       {64, 64}},
      {ScaleFormat::F32, ScaleFormat::F32Pow2, ScaleFormat::UE8M0},
      {Layout::KMajor, Layout::MNMajor},
      {std::nullopt, 32, 64, 96, 128, 160, 192, 256, 384, 512},
      {DType::BF16, DType::F16, DType::F32},
  };
  return axes;
}

std::vector<RecipePoint> recipeSpace() {
  const RecipeAxes &ax = recipeAxes();
  std::vector<OperandSpec> operands;
  for (DType f : ax.formats)
    for (auto [rows, cols] : ax.blocks)
      for (ScaleFormat s : ax.scaleFormats)
        for (Layout l : ax.layouts)
          operands.push_back({f, l, Granularity::block(rows, cols, s)});
  std::vector<RecipePoint> out;
  out.reserve(operands.size() * operands.size() * ax.intervals.size() *
              ax.outs.size());
  for (const OperandSpec &a : operands)
    for (const OperandSpec &b : operands)
      for (std::optional<int64_t> p : ax.intervals)
        for (DType o : ax.outs)
          out.push_back({a, b, p, o});
  return out;
}

RecipePoint kMajorView(const RecipePoint &p) {
  RecipePoint k = p;
  for (OperandSpec *o : {&k.a, &k.b}) {
    if (o->layout == Layout::MNMajor) {
      const Granularity &g = o->granularity;
      o->granularity = Granularity::block(g.cols, g.rows, g.scale);
      o->layout = Layout::KMajor;
    }
  }
  return k;
}

KernelSpec recipeSpec(const RecipePoint &p, Arch arch, int64_t m, int64_t n,
                      int64_t k) {
  KernelSpec s;
  s.arch = arch;
  s.m = m;
  s.n = n;
  s.k = k;
  s.a = p.a;
  s.b = p.b;
  s.promotionInterval = p.promotionInterval;
  s.out = p.out;
  return s;
}

static void describeOperand(std::ostringstream &os, const OperandSpec &o) {
  os << toString(o.format) << " " << toString(o.granularity) << " "
     << toString(o.layout);
}

std::string describe(const RecipePoint &p) {
  std::ostringstream os;
  os << "A ";
  describeOperand(os, p.a);
  os << ", B ";
  describeOperand(os, p.b);
  os << ", ";
  if (p.promotionInterval)
    os << "p" << *p.promotionInterval;
  else
    os << "no promotion";
  os << " -> " << toString(p.out);
  return os.str();
}

/// How a K-major operand's scales enter the kernel: constant, per row or
/// column (outer), or varying along K; stored as UE8M0 bytes or as floats
/// (f32 and f32_pow2 take the same path).
static std::string scalePath(const Granularity &g) {
  std::string s = g.cols != Granularity::kWhole   ? "k"
                  : g.rows == Granularity::kWhole ? "tensor"
                                                  : "outer";
  if (g.scale == ScaleFormat::UE8M0)
    s += ".ue8m0";
  return s;
}

std::string recipeClass(const RecipePoint &p) {
  std::ostringstream os;
  os << "A " << scalePath(p.a.granularity) << ", B "
     << scalePath(p.b.granularity) << ", ";
  const int64_t steps = p.promotionInterval.value_or(0) / 32;
  if (steps == 0)
    os << "unpromoted";
  else if (steps <= 4 && 4 % steps == 0)
    os << "promoted within a k-block";
  else if (steps % 4 == 0)
    os << "promoted every few k-blocks";
  else
    os << "promoted at run-time steps";
  os << " -> " << toString(p.out);
  return os.str();
}

std::vector<RecipePoint> recipeSample(Arch arch) {
  // Per class, the first accepted point in the format pair that the class's
  // position rotates to (E4M3 x E4M3, E4M3 x E5M2, E5M2 x E4M3, E5M2 x
  // E5M2), else its first accepted point.
  std::map<std::string, std::vector<RecipePoint>> byClass;
  std::vector<std::string> order;
  for (const RecipePoint &p : recipeSpace()) {
    if (!checkGemmRecipe(p.a, p.b, p.promotionInterval, p.out))
      continue;
    const RecipePoint k = kMajorView(p);
    if (!checkTargetRecipe(recipeSpec(k, arch, 128, 128, 1024)))
      continue;
    auto [it, inserted] = byClass.try_emplace(recipeClass(k));
    if (inserted)
      order.push_back(it->first);
    it->second.push_back(k);
  }
  std::vector<RecipePoint> out;
  for (size_t i = 0; i < order.size(); ++i) {
    const std::vector<RecipePoint> &pts = byClass[order[i]];
    const DType fa = (i / 2) % 2 ? DType::E5M2 : DType::E4M3FN;
    const DType fb = i % 2 ? DType::E5M2 : DType::E4M3FN;
    const RecipePoint *pick = &pts.front();
    for (const RecipePoint &p : pts)
      if (p.a.format == fa && p.b.format == fb) {
        pick = &p;
        break;
      }
    out.push_back(*pick);
  }
  return out;
}

} // namespace fp8
