//===- RecipeRules.cpp - Target-independent rules of FP8 recipes ----------===//

#include "core/RecipeRules.h"

#include <sstream>

namespace fp8 {

std::string formatShape(const Shape &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      os << ", ";
    if (shape[i] == kDynamic)
      os << '?';
    else
      os << shape[i];
  }
  os << ']';
  return os.str();
}

int64_t scaleCount(int64_t block, int64_t size) {
  if (block == Granularity::kWhole)
    return 1;
  if (size == kDynamic)
    return kDynamic;
  // Not (size + block - 1) / block: that overflows for sizes near INT64_MAX.
  return size / block + (size % block != 0);
}

Shape scaleShapeFor(const Shape &operand, const Granularity &g) {
  size_t rank = operand.size();
  if (rank != 2 && rank != 3)
    return {};
  Shape scale(operand);
  scale[rank - 2] = scaleCount(g.rows, operand[rank - 2]);
  scale[rank - 1] = scaleCount(g.cols, operand[rank - 1]);
  return scale;
}

Granularity logicalGranularity(const Granularity &stored, Layout layout) {
  if (layout == Layout::KMajor)
    return stored;
  return Granularity::block(stored.cols, stored.rows, stored.scale);
}

int64_t kBlock(const Granularity &stored, Layout layout) {
  return logicalGranularity(stored, layout).cols;
}

bool isMX(const Granularity &stored, Layout layout) {
  return logicalGranularity(stored, layout) == Granularity::mx();
}

//===----------------------------------------------------------------------===//
// One quantized tensor.
//===----------------------------------------------------------------------===//

Status checkGranularity(const Granularity &g, std::string_view name) {
  if (g.rows < 0)
    return errorf("expected the block rows of ", name,
                  " to be positive or whole, found ", g.rows);
  if (g.cols < 0)
    return errorf("expected the block columns of ", name,
                  " to be positive or whole, found ", g.cols);
  return Status::ok();
}

Status checkDelayedScaling(const DelayedScaling &d) {
  if (d.historyLength < 1 || d.historyLength > kMaxHistoryLength)
    return errorf("expected the amax history length to be in [1, ",
                  kMaxHistoryLength, "], found ", d.historyLength);
  if (d.updateInterval < 1 || d.updateInterval > kMaxUpdateInterval)
    return errorf("expected the amax update interval to be in [1, ",
                  kMaxUpdateInterval, "], found ", d.updateInterval);
  if (d.margin < 0 || d.margin > kMaxMargin)
    return errorf("expected the margin to be in [0, ", kMaxMargin,
                  "] (a headroom of 2^margin on the amax), found ", d.margin);
  return Status::ok();
}

bool takesGivenAmax(const QuantRecipe &q) {
  return q.granularity.isPerTensor() && q.mode == ScalingMode::Current;
}

Status checkScalingMode(ScalingMode mode, const Granularity &g) {
  if (mode == ScalingMode::Delayed && !g.isPerTensor())
    return errorf("expected per_tensor granularity with delayed scaling (one "
                  "amax history per tensor), found ",
                  toString(g));
  return Status::ok();
}

Status checkAmaxHistory(const DelayedScaling &d, const Shape &history) {
  if (history.size() != 1 ||
      (history[0] != kDynamic && history[0] != d.historyLength))
    return errorf("expected the amax history to have shape [", d.historyLength,
                  "] (the history length), found ", formatShape(history));
  return Status::ok();
}

Status checkQuantRecipe(const QuantRecipe &q, std::string_view name) {
  if (!isFP8(q.format))
    return errorf("expected ", name,
                  " to be quantized to an FP8 format (e4m3fn or e5m2), found ",
                  toString(q.format));
  FP8_RETURN_IF_ERROR(
      checkGranularity(q.granularity, std::string(name) + "'s granularity"));
  FP8_RETURN_IF_ERROR(checkScalingMode(q.mode, q.granularity));
  if (q.mode == ScalingMode::Delayed)
    return checkDelayedScaling(q.delayed);
  return Status::ok();
}

/// Sizes are non-negative or kDynamic.
static Status checkSizes(const Shape &shape, std::string_view what) {
  for (int64_t size : shape)
    if (size < 0 && size != kDynamic)
      return errorf("expected the sizes of ", what,
                    " to be non-negative, found ", formatShape(shape));
  return Status::ok();
}

Status checkScaleShape(const Shape &operand, const Granularity &g,
                       const Shape &scale, std::string_view name) {
  FP8_RETURN_IF_ERROR(
      checkGranularity(g, std::string(name) + "'s granularity"));
  FP8_RETURN_IF_ERROR(checkSizes(operand, name));
  std::string scaleName = "the scale of " + std::string(name);
  FP8_RETURN_IF_ERROR(checkSizes(scale, scaleName));
  Shape expected = scaleShapeFor(operand, g);
  if (expected.empty())
    return errorf("expected ", name,
                  " to have rank 2 (or 3 for a stack of groups), found ",
                  operand.size());
  if (scale.size() != expected.size())
    return errorf("expected ", scaleName, " to have rank ", expected.size(),
                  " (", name, "'s), found ", scale.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == kDynamic || scale[i] == kDynamic ||
        expected[i] == scale[i])
      continue;
    return errorf("expected ", scaleName, " to have shape ",
                  formatShape(expected), " for a ", formatShape(operand),
                  " operand with ", toString(g), " granularity, found ",
                  formatShape(scale));
  }
  return Status::ok();
}

Status checkScaleType(const Granularity &g, DType scaleType,
                      std::string_view name) {
  DType expected = g.scale == ScaleFormat::UE8M0 ? DType::UE8M0 : DType::F32;
  if (scaleType != expected)
    return errorf("expected the scale of ", name, " to be ", toString(expected),
                  " (", toString(g.scale), " scales), found ",
                  toString(scaleType));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// A scaled GEMM.
//===----------------------------------------------------------------------===//

Status checkFormatPair(DType a, DType b, DType out) {
  if (!isFP8(a))
    return errorf("expected A to be an FP8 format (e4m3fn or e5m2), found ",
                  toString(a));
  if (!isFP8(b))
    return errorf("expected B to be an FP8 format (e4m3fn or e5m2), found ",
                  toString(b));
  if (out != DType::BF16 && out != DType::F32)
    return errorf("expected the result to be bf16 or f32, found ",
                  toString(out));
  return Status::ok();
}

Status checkMXPair(const OperandSpec &a, const OperandSpec &b) {
  bool mxA = isMX(a.granularity, a.layout);
  bool mxB = isMX(b.granularity, b.layout);
  if (mxA == mxB)
    return Status::ok();
  const char *mx = mxA ? "A" : "B";
  const char *other = mxA ? "B" : "A";
  const OperandSpec &o = mxA ? b : a;
  return errorf("expected ", other, " to have MX granularity like ", mx,
                " (one ue8m0 scale per 1x32 elements along K), found ",
                toString(o.granularity), " (", toString(o.layout), ")");
}

Status checkKBlocks(const OperandSpec &a, const OperandSpec &b) {
  int64_t ka = kBlock(a.granularity, a.layout);
  int64_t kb = kBlock(b.granularity, b.layout);
  for (auto [name, k] : {std::pair{"A", ka}, std::pair{"B", kb}})
    if (k != Granularity::kWhole && k % kMmaK != 0)
      return errorf("expected the K block of ", name, "'s scales (", k,
                    ") to be a multiple of ", kMmaK, " (the FP8 MMA K step)");
  if (ka != Granularity::kWhole && kb != Granularity::kWhole && ka != kb)
    return errorf("expected the K blocks of A's and B's scales to be equal "
                  "when both vary along K, found ",
                  ka, " and ", kb);
  return Status::ok();
}

Status checkPromotionInterval(std::optional<int64_t> interval,
                              const OperandSpec &a, const OperandSpec &b) {
  if (interval && (*interval <= 0 || *interval % kMmaK != 0))
    return errorf("expected promotion_interval to be a positive multiple of ",
                  kMmaK, ", found ", *interval);
  bool mx = isMX(a.granularity, a.layout) && isMX(b.granularity, b.layout);
  for (auto [name, spec] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    int64_t k = kBlock(spec->granularity, spec->layout);
    if (k == Granularity::kWhole)
      continue;
    if (!interval) {
      if (mx)
        continue;
      return errorf("expected a promotion_interval: the scales of ", name,
                    " vary along K (blocks of ", k,
                    "), so partial sums must be promoted to apply them");
    }
    if (k % *interval != 0)
      return errorf("expected promotion_interval (", *interval,
                    ") to divide the K block of ", name, "'s scales (", k, ")");
  }
  return Status::ok();
}

Status checkGemmRecipe(const OperandSpec &a, const OperandSpec &b,
                       std::optional<int64_t> promotionInterval, DType out) {
  FP8_RETURN_IF_ERROR(checkFormatPair(a.format, b.format, out));
  FP8_RETURN_IF_ERROR(checkGranularity(a.granularity, "A's granularity"));
  FP8_RETURN_IF_ERROR(checkGranularity(b.granularity, "B's granularity"));
  FP8_RETURN_IF_ERROR(checkMXPair(a, b));
  FP8_RETURN_IF_ERROR(checkKBlocks(a, b));
  return checkPromotionInterval(promotionInterval, a, b);
}

Status checkMatmulRecipe(const MatmulRecipe &r) {
  FP8_RETURN_IF_ERROR(checkQuantRecipe(r.a, "A"));
  FP8_RETURN_IF_ERROR(checkQuantRecipe(r.b, "B"));
  if (r.out != DType::BF16 && r.out != DType::F32)
    return errorf("expected out to be bf16 or f32, found ", toString(r.out));
  return checkGemmRecipe({r.a.format, Layout::KMajor, r.a.granularity},
                         {r.b.format, Layout::KMajor, r.b.granularity},
                         r.promotionInterval, r.out);
}

/// "a dense", "a contiguous grouped", "a masked grouped".
static const char *kindName(GemmKind kind) {
  switch (kind) {
  case GemmKind::Dense:
    return "a dense";
  case GemmKind::GroupedContiguous:
    return "a contiguous grouped";
  case GemmKind::GroupedMasked:
    return "a masked grouped";
  case GemmKind::GroupedK:
    return "a K-grouped";
  }
  return "a";
}

static Status checkRank(const Shape &shape, size_t rank, std::string_view name,
                        GemmKind kind) {
  if (shape.size() != rank)
    return errorf("expected ", name, " of ", kindName(kind),
                  " GEMM to have rank ", rank, ", found ", shape.size());
  return Status::ok();
}

/// Fails unless the two sizes are equal or one is dynamic; the message reads
/// "expected <actualName> (<actual>) to equal <expectedName> (<expected>)".
static Status checkEqual(int64_t actual, int64_t expected,
                         std::string_view actualName,
                         std::string_view expectedName) {
  if (actual == kDynamic || expected == kDynamic || actual == expected)
    return Status::ok();
  return errorf("expected ", actualName, " (", actual, ") to equal ",
                expectedName, " (", expected, ")");
}

Status checkScaledGemm(const ScaledGemmArgs &args) {
  const OperandSpec &a = args.a, &b = args.b;
  FP8_RETURN_IF_ERROR(checkGemmRecipe(a, b, args.promotionInterval, args.out));

  const bool grouped = args.kind != GemmKind::Dense;
  const bool masked = args.kind == GemmKind::GroupedMasked;
  const bool alongK = args.kind == GemmKind::GroupedK;
  // Along K the operands are single matrices and D stacks the groups.
  const size_t rankA = masked ? 3 : 2;
  const size_t rankB = grouped && !alongK ? 3 : 2;
  const size_t rankD = masked || alongK ? 3 : 2;
  FP8_RETURN_IF_ERROR(checkRank(args.aShape, rankA, "A", args.kind));
  FP8_RETURN_IF_ERROR(checkRank(args.bShape, rankB, "B", args.kind));
  FP8_RETURN_IF_ERROR(checkRank(args.dShape, rankD, "the result", args.kind));
  FP8_RETURN_IF_ERROR(checkSizes(args.aShape, "A"));
  FP8_RETURN_IF_ERROR(checkSizes(args.bShape, "B"));
  FP8_RETURN_IF_ERROR(checkSizes(args.dShape, "the result"));

  // The trailing two dimensions of each operand are one GEMM's; a leading
  // one counts groups.
  auto rows = [](const Shape &s) { return s[s.size() - 2]; };
  auto cols = [](const Shape &s) { return s[s.size() - 1]; };
  bool aK = a.layout == Layout::KMajor, bK = b.layout == Layout::KMajor;
  int64_t m = aK ? rows(args.aShape) : cols(args.aShape);
  int64_t kA = aK ? cols(args.aShape) : rows(args.aShape);
  int64_t n = bK ? rows(args.bShape) : cols(args.bShape);
  int64_t kB = bK ? cols(args.bShape) : rows(args.bShape);
  FP8_RETURN_IF_ERROR(checkEqual(kB, kA, "K of B", "K of A"));
  FP8_RETURN_IF_ERROR(checkEqual(rows(args.dShape), m, "the result's rows",
                                 masked ? "A's maxM" : "M"));
  FP8_RETURN_IF_ERROR(
      checkEqual(cols(args.dShape), n, "the result's columns", "N"));

  if (alongK)
    // A group starts at any multiple of 128 along K: a scale block of 128
    // (or one constant along K) never straddles two groups.
    for (const OperandSpec *o : {&a, &b}) {
      const int64_t kb = kBlock(o->granularity, o->layout);
      if (kb != 128 && kb != Granularity::kWhole)
        return errorf("expected K blocks of 128 (or scales constant along K) "
                      "for ",
                      o == &a ? "A" : "B",
                      " of a K-grouped GEMM, whose groups start at multiples "
                      "of 128, found ",
                      kb);
    }

  if (grouped) {
    const int64_t groups = alongK ? args.dShape[0] : args.bShape[0];
    if (masked) {
      FP8_RETURN_IF_ERROR(checkEqual(args.aShape[0], groups,
                                     "the group count of A",
                                     "the group count of B"));
      FP8_RETURN_IF_ERROR(checkEqual(args.dShape[0], groups,
                                     "the group count of the result",
                                     "the group count of B"));
    }
    if (alongK && groups == 0)
      return errorf("expected at least one group in the result [G, M, N], "
                    "found 0");
    const char *what = masked ? "the valid-row counts" : "the group offsets";
    if (args.groupShape.size() != 1)
      return errorf("expected ", what, " to have rank 1, found ",
                    args.groupShape.size());
    FP8_RETURN_IF_ERROR(checkSizes(args.groupShape, what));
    int64_t count = args.groupShape[0];
    if (count != kDynamic && groups != kDynamic) {
      // Offsets hold groups + 1 boundaries; compared as count - 1 so that
      // an absurd group count cannot overflow.
      if (masked && count != groups)
        return errorf("expected ", what, " to have one element per group (",
                      groups, "), found ", count);
      if (!masked && (count == 0 || count - 1 != groups))
        return errorf("expected ", what,
                      " to have one element more than there are groups (",
                      groups, "), found ", count);
    }
  }

  FP8_RETURN_IF_ERROR(
      checkScaleShape(args.aShape, a.granularity, args.aScaleShape, "A"));
  FP8_RETURN_IF_ERROR(
      checkScaleShape(args.bShape, b.granularity, args.bScaleShape, "B"));
  FP8_RETURN_IF_ERROR(checkScaleType(a.granularity, args.aScaleType, "A"));
  return checkScaleType(b.granularity, args.bScaleType, "B");
}

} // namespace fp8
