//===- Sm90Rules.cpp - What the sm_90a GEMM kernel can run ----------------===//
//
// The rules of the sm_90a generator (scale plans, recipe, tile legality) and
// the resource model they rest on: registers per warpgroup, accumulator and
// epilogue widths, shared memory. The emitter (Sm90Gemm.cpp) turns the same
// model into the kernel's constants (Sm90Resources.h).
//
//===----------------------------------------------------------------------===//

#include "codegen/Sm90Gemm.h"
#include "codegen/Sm90Resources.h"

#include "core/Env.h"
#include "core/RecipeRules.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <sstream>

namespace fp8 {

namespace sm90 {
/// Without promotion there is one accumulator: wgmma's own limit.
constexpr int kMaxBlockN = 256;
/// Split-K keeps the partial and the running sum live at once in the
/// reduction: 160-wide promoted tiles spill there (ptxas -v), 144 do not.
constexpr int kMaxSplitKBlockN = 144;
constexpr int kMaxTailSplitBlockN = 192;

int outBytes(const KernelSpec &s) { return s.out == DType::F32 ? 4 : 2; }

bool tmaStore(const KernelSpec &s) {
  // A quantizing epilogue stores its codes itself (gemm_quantize.cuh).
  return !s.epilogue && (s.n * outBytes(s)) % 16 == 0;
}

int scaleTmaBoxA(const KernelSpec &s) {
  return s.tile.blockM + (s.kind == GemmKind::GroupedContiguous ? 4 : 0);
}

int scaleTmaSlotA(const KernelSpec &s) {
  return s.tile.blockM + (s.kind == GemmKind::GroupedContiguous ? 32 : 0);
}

/// Columns per TMA store chunk: the widest of 128/64/32/16 bytes that tiles
/// BLOCK_N exactly (the chunk width is also the swizzle span).
int outChunkCols(const KernelSpec &s) {
  const int ob = outBytes(s);
  for (int bytes : {128, 64, 32, 16})
    if (s.tile.blockN % (bytes / ob) == 0)
      return bytes / ob;
  return 16 / ob;
}

/// setmaxnreg budgets (PTX ISA 9.7.17.1): 65536 registers per SM, one CTA.
/// With one math warpgroup the launch bound already grants 255 per thread.
/// The producer warpgroup can give the consumers registers (setmaxnreg)
/// when its code is small: the TMA thread alone. Per-column B scales (the
/// scale loader warp) and split-K's larger schedule need more; UE8M0 scales
/// keep the 56/224 split the compile matrix was measured with.
bool leanProducer(const KernelSpec &s) {
  return s.tile.splitK == 1 && s.a.granularity.scale != ScaleFormat::UE8M0 &&
         s.b.granularity.scale != ScaleFormat::UE8M0 &&
         s.b.granularity.rows != 1;
}

/// setmaxnreg budgets (PTX ISA 9.7.17.1): 65536 registers per SM, one CTA of
/// 3 warpgroups: 40 + 2 x 232 (lean producer) or 56 + 2 x 224; of 4
/// warpgroups (BLOCK_M 192): 40 + 3 x 152.
int producerRegs(const KernelSpec &s) {
  if (int regs = env::sm90ProducerRegs())
    return regs;
  if (s.tile.mathWarpgroups == 3)
    return 40;
  if (s.tile.mathWarpgroups != 2)
    return 0;
  return leanProducer(s) ? 40 : 56;
}
int consumerRegs(const KernelSpec &s) {
  if (int regs = env::sm90ConsumerRegs())
    return regs;
  if (s.tile.mathWarpgroups == 3)
    return 152;
  if (s.tile.mathWarpgroups != 2)
    return 0;
  return leanProducer(s) ? 232 : 224;
}

/// Widest tile whose two BLOCK_N/2-float accumulators (tensor-core partials
/// and promoted sums) fit the consumers' registers without spills. Measured
/// with ptxas -v (CUDA 13.0) over test/runtime/Sm90CompileTest.cpp's matrix:
/// 232 registers hold 192 columns, 224 registers 160; per-column B scales
/// applied in the epilogue (per-channel recipes) cost registers too (160).
/// Wider promoted tiles are split into N chunks (mmaN below).
bool wideRegisters(const KernelSpec &s) {
  const bool perColumnEpilogue = s.b.granularity.rows != Granularity::kWhole &&
                                 s.b.granularity.cols == Granularity::kWhole;
  return leanProducer(s) && !perColumnEpilogue;
}
int maxUnchunkedBlockN(const KernelSpec &s) {
  // Several promotions per k-block (interval 32 or 64) keep the next
  // k-block's scales live across more code: 192 columns spill there.
  const int64_t p = s.promotionInterval.value_or(128);
  return wideRegisters(s) && p >= 128 ? 192 : 160;
}

/// Widest promoted tile: chunking reaches 256 (wgmma's N limit) when the
/// interval divides a k-block (32, 64, 128: every chunk is promoted at the
/// end of each k-block) and there is no split-K; the chunked kernel holds
/// 128 + 64 accumulator floats per thread.
int maxPromotedBlockN(const KernelSpec &s) {
  const bool chunkable = s.promotionInterval &&
                         128 % *s.promotionInterval == 0 &&
                         s.tile.splitK == 1 && wideRegisters(s);
  // Several promotions per k-block spill above 192 chunked columns.
  if (chunkable)
    return s.promotionInterval == 128 ? 256 : 192;
  return maxUnchunkedBlockN(s);
}

/// N columns per wgmma (the tensor-core accumulator's width). Tiles wider
/// than the consumers can hold twice are split into two N chunks that reuse
/// one chunk-wide accumulator, promoted after every chunk (so only for
/// promotion intervals of at most one k-block, and without split-K).
int mmaN(const KernelSpec &s) {
  const int bn = s.tile.blockN;
  if (s.tile.overlap == PromotionOverlap::AlternateN)
    return bn / 2;
  if (s.tile.overlap == PromotionOverlap::AlternateK)
    return bn;
  if (s.promotionInterval && bn > maxUnchunkedBlockN(s))
    return bn / 2; // maxPromotedBlockN admits this only when chunkable
  return bn;
}

/// Widest tile with overlapped promotion (two tensor-core accumulators and
/// the promoted one in registers). Measured with ptxas -v (CUDA 13.0) over
/// test/runtime/Sm90CompileTest.cpp's matrix: alternating k-blocks hold
/// 1.5 x BLOCK_N/2 floats (128 columns), alternating N halves BLOCK_N floats
/// (192 columns). Per-column B scales (a larger loader) spill at those
/// widths with a cluster or split-K: 112 and 176.
int maxOverlapBlockN(const KernelSpec &s) {
  if (s.tile.overlap == PromotionOverlap::AlternateK)
    return s.b.granularity.rows == 1 ? 112 : 128;
  return s.b.granularity.rows == 1 ? 176 : 192;
}

/// Columns of each warpgroup's 64-row slab staged per epilogue round: the
/// whole tile up to 32 KiB of staging, else the widest chunk-aligned divisor
/// of BLOCK_N whose staging stays within 16 KiB per buffer, so that wide
/// tiles keep their pipeline stages.
int epiCols(const KernelSpec &s) {
  const int ob = outBytes(s);
  const int mw = s.tile.mathWarpgroups;
  const int bn = s.tile.blockN;
  const int chunk = outChunkCols(s);
  if (mw * 64 * bn * ob <= 32768)
    return bn;
  int best = chunk;
  for (int d = chunk; d < bn; d += chunk)
    if (bn % d == 0 && mw * 64 * d * ob <= 16384)
      best = d;
  return best;
}

/// Staging buffers: two (the next round's writes overlap the previous
/// round's store) unless the second one would cost a pipeline stage.
int epiBuffers(const KernelSpec &s) {
  if (!tmaStore(s) || s.tile.blockN / epiCols(s) == 1)
    return 1;
  KernelSpec probe = s;
  auto maxStages = [&](int buffers) {
    int best = 0;
    for (int st = 1; st <= 16; ++st) {
      probe.tile.stages = st;
      if (sharedBytesWith(probe, buffers) <= kSm90MaxSharedBytes)
        best = st;
    }
    return best;
  };
  return maxStages(2) >= std::min(maxStages(1), 4) ? 2 : 1;
}

const char *operandName(bool isA) { return isA ? "A" : "B"; }

std::string_view ptxType(DType t) { return t == DType::E5M2 ? "e5m2" : "e4m3"; }
} // namespace sm90

using namespace sm90;

Expected<Sm90ScalePlan> planSm90Scales(const KernelSpec &spec, bool isA) {
  const OperandSpec &o = isA ? spec.a : spec.b;
  const Granularity &g = o.granularity;
  const char *name = operandName(isA);
  Sm90ScalePlan plan;
  plan.ue8m0 = g.scale == ScaleFormat::UE8M0;
  // K-major storage: rows are M (A) or N (B), columns are K.
  plan.outerBlock = g.rows;
  plan.kBlock = g.cols;
  if (g.rows < 0 || g.cols < 0)
    return errorf("expected non-negative scale block extents for ", name,
                  ", found ", g.rows, "x", g.cols);
  if (g.cols == Granularity::kWhole) {
    plan.mode = g.rows == Granularity::kWhole ? Sm90ScalePlan::Mode::Tensor
                                              : Sm90ScalePlan::Mode::Outer;
    return plan;
  }
  plan.mode = Sm90ScalePlan::Mode::K;
  if (g.cols % 128 != 0)
    return errorf("expected the K block of ", name, "'s scales (", g.cols,
                  ") to be a multiple of 128 on sm_90a (scales are applied per "
                  "128-wide k-block); MX 1x32 scaling needs sm_100a");
  if (!isA && g.rows != Granularity::kWhole && g.rows != 1 && g.rows % 8 != 0)
    return errorf("expected B's scale block along N (", g.rows,
                  ") to be 1, whole, or a multiple of 8 on sm_90a");
  return plan;
}

Status checkSm90Recipe(const KernelSpec &s) {
  if (!isFP8(s.a.format) || !isFP8(s.b.format))
    return errorf("expected FP8 operands (e4m3fn or e5m2), found A ",
                  toString(s.a.format), " and B ", toString(s.b.format));
  if (s.out != DType::BF16 && s.out != DType::F32)
    return errorf("expected a bf16 or f32 result on sm_90a, found ",
                  toString(s.out));
  if (s.a.layout != Layout::KMajor || s.b.layout != Layout::KMajor)
    return errorf("expected K-major A and B on sm_90a (FP8 wgmma reads both "
                  "operands K-major from shared memory), found A ",
                  toString(s.a.layout), " and B ", toString(s.b.layout),
                  ": transpose the operand first");
  auto pa = planSm90Scales(s, true);
  if (!pa)
    return pa.status();
  auto pb = planSm90Scales(s, false);
  if (!pb)
    return pb.status();
  // The recipe's rules (core/RecipeRules.h): the interval, the K blocks of
  // the scales, and promotion wherever a scale varies along K.
  return checkGemmRecipe(s.a, s.b, s.promotionInterval, s.out);
}

namespace {
/// The rules of three consumer warpgroups (block_m 192).
Status checkBlockM192(const KernelSpec &s) {
  const TileConfig &t = s.tile;
  // Three consumer warpgroups share 152 registers each (setmaxnreg): one
  // 64 x 128 accumulator pair fits, nothing more. ptxas -v over
  // test/runtime/Sm90CompileTest.cpp's matrix (CUDA 13.0): a second
  // accumulator (overlap), split-K's reduction, per-column epilogue
  // scales and B scale blocks at run-time columns (block_n not dividing
  // 128) spill.
  if (t.overlap != PromotionOverlap::None)
    return errorf("expected overlap 'none' with block_m 192 (three "
                  "consumer warpgroups have no registers for a second "
                  "accumulator), found '",
                  toString(t.overlap), "'");
  if (t.blockN > 128 || 128 % t.blockN != 0)
    return errorf("expected block_n to divide 128 with block_m 192 (three "
                  "consumer warpgroups of 152 registers), found ",
                  t.blockN);
  if (t.splitK != 1)
    return errorf("expected split_k 1 with block_m 192 (the reduction "
                  "needs registers three consumer warpgroups do not "
                  "have), found ",
                  t.splitK);
  if (s.b.granularity.rows != Granularity::kWhole &&
      s.b.granularity.cols == Granularity::kWhole)
    return errorf("expected B scales constant along N or varying along K "
                  "with block_m 192 (per-column epilogue scales need "
                  "registers three consumer warpgroups do not have), "
                  "found B granularity ",
                  toString(s.b.granularity));
  return Status::ok();
}

/// What a quantizing epilogue needs (codegen/kernels/gemm_quantize.cuh): a
/// dense GEMM that writes D (not C + D) and a tile that holds whole scale
/// blocks of the quantized result, and whole block pairs; columns of the
/// quantized result in multiples of 8 (its codes go out eight at a time).
Status checkSm90Epilogue(const KernelSpec &s) {
  if (!s.epilogue)
    return Status::ok();
  const GemmEpilogue &e = *s.epilogue;
  if (s.kind != GemmKind::Dense)
    return errorf("expected a dense GEMM with a quantizing epilogue, found ",
                  toString(s.kind));
  if (s.accumulate)
    return errorf("expected no accumulation into C with a quantizing "
                  "epilogue");
  const int64_t cols = e.outCols(s.n);
  if (cols % 8 != 0)
    return errorf("expected the quantized result's columns (", cols,
                  ") to be a multiple of 8 (its codes are stored eight at a "
                  "time)");
  const TileConfig &t = s.tile;
  if (e.pairBlock > 0 && t.blockN % (2 * e.pairBlock) != 0)
    return errorf("expected block_n (", t.blockN,
                  ") to hold whole pairs of the epilogue's ", e.pairBlock,
                  "-column blocks (a multiple of ", 2 * e.pairBlock, ")");
  const int tileCols = e.pairBlock > 0 ? t.blockN / 2 : t.blockN;
  const int64_t group = e.granularity.cols;
  if (group == Granularity::kWhole ? cols > tileCols
                                   : group % 8 != 0 || tileCols % group != 0)
    return errorf(
        "expected the tile's ", tileCols,
        " quantized columns to hold whole scale blocks of ",
        group == Granularity::kWhole ? std::to_string(cols) + " (whole rows)"
                                     : std::to_string(group),
        group != Granularity::kWhole && group % 8 != 0
            ? " (a multiple of 8 columns)"
            : ": a tile narrower than a scale block cannot quantize it");
  return Status::ok();
}

/// What a grouped kernel needs on top of the dense rules: one persistent
/// grid walking every group's tiles (no split-K, no split tail; the tile
/// count is device data), D written (not accumulated into) unless the
/// groups are along K (weight gradients accumulate), in the contiguous
/// form A scales that do not span rows (a group starts at any row), and
/// along K scale blocks of 128 (a group starts at a multiple of 128).
Status checkSm90Grouped(const KernelSpec &s) {
  if (s.kind == GemmKind::Dense)
    return Status::ok();
  const char *form = s.kind == GemmKind::GroupedContiguous ? "contiguous"
                     : s.kind == GemmKind::GroupedMasked   ? "masked"
                                                           : "K";
  const TileConfig &t = s.tile;
  if (!t.persistent || t.splitK != 1 || t.tailSplit != 1)
    return errorf("expected a persistent grid with split_k 1 and tail_split "
                  "1 for a grouped GEMM (one grid walks every group's "
                  "tiles), found ",
                  t.persistent ? "" : "a non-persistent grid, ", "split_k ",
                  t.splitK, ", tail_split ", t.tailSplit);
  if (s.accumulate && s.kind != GemmKind::GroupedK)
    return errorf("expected no accumulation into C in a ", form,
                  " grouped GEMM (D is written, not updated)");
  if (s.kind == GemmKind::GroupedK)
    for (const OperandSpec *o : {&s.a, &s.b}) {
      const int64_t kb = o->granularity.cols;
      if (kb != Granularity::kWhole && kb != 128)
        return errorf("expected K blocks of 128 (or scales constant along "
                      "K) in a K-grouped GEMM, whose groups start at "
                      "multiples of 128, found ",
                      o == &s.a ? "A" : "B", " granularity ",
                      toString(o->granularity));
    }
  const int64_t rows = s.a.granularity.rows;
  if (s.kind == GemmKind::GroupedContiguous && rows != 1 &&
      rows != Granularity::kWhole)
    return errorf("expected A's scales to cover one row or all rows in a "
                  "contiguous grouped GEMM (a group starts at any row), "
                  "found A granularity ",
                  toString(s.a.granularity));
  if (s.groups < 1)
    return errorf("expected at least one group in a ", form,
                  " grouped GEMM, found ", s.groups);
  return Status::ok();
}
} // namespace

Status checkSm90Spec(const KernelSpec &s) {
  if (s.arch != Arch::SM90a)
    return errorf("expected arch sm_90a for the Hopper generator, found ",
                  toString(s.arch));
  FP8_RETURN_IF_ERROR(checkGemmShape(s));
  FP8_RETURN_IF_ERROR(checkSm90Recipe(s));
  FP8_RETURN_IF_ERROR(checkSm90Grouped(s));
  FP8_RETURN_IF_ERROR(checkSm90Epilogue(s));
  if (s.amaxOut && s.kind != GemmKind::Dense)
    return errorf("expected a dense GEMM with 'amax_out' (one amax of one "
                  "D), found ",
                  toString(s.kind));
  auto pa = planSm90Scales(s, true);
  auto pb = planSm90Scales(s, false);
  const bool promoted = s.promotionInterval.has_value();

  const TileConfig &t = s.tile;
  if (t.blockK != 128)
    return errorf("expected block_k 128 on sm_90a (one 128-byte swizzle "
                  "atom of FP8), found ",
                  t.blockK);
  if (t.blockM != 64 && t.blockM != 128 && t.blockM != 192)
    return errorf("expected block_m 64, 128 or 192, found ", t.blockM);
  if (t.mathWarpgroups != t.blockM / 64)
    return errorf("expected ", t.blockM / 64, " math warpgroups for block_m ",
                  t.blockM, " (64 rows each), found ", t.mathWarpgroups);
  if (t.blockM == 192)
    FP8_RETURN_IF_ERROR(checkBlockM192(s));
  if (t.overlap != PromotionOverlap::None) {
    if (s.promotionInterval != 128)
      return errorf("expected a promotion interval of 128 with overlap '",
                    toString(t.overlap),
                    "' (the accumulators alternate every k-block), found ",
                    promotionToInt(s.promotionInterval));
    const int maxN = maxOverlapBlockN(s);
    const int step = t.overlap == PromotionOverlap::AlternateN ? 16 : 8;
    if (t.blockN < step || t.blockN > maxN || t.blockN % step != 0)
      return errorf("expected block_n to be a multiple of ", step, " in [",
                    step, ", ", maxN, "] with overlap '", toString(t.overlap),
                    "' (three accumulators live in registers), found ",
                    t.blockN);
  }
  // Promoted tiles keep two accumulators in registers; wider ones are
  // split into two N chunks (promotion at least every k-block, no split-K).
  const int maxN = t.overlap != PromotionOverlap::None ? maxOverlapBlockN(s)
                   : promoted                          ? maxPromotedBlockN(s)
                                                       : kMaxBlockN;
  if (t.blockN < 8 || t.blockN > maxN || t.blockN % 8 != 0)
    return errorf("expected block_n to be a multiple of 8 in [8, ", maxN, "]",
                  promoted && maxN < kMaxBlockN
                      ? " (two accumulators live in registers; tiles over "
                        "192 need f32 scales, a promotion interval of 128 and "
                        "no split-K)"
                      : "",
                  ", found ", t.blockN);
  if (mmaN(s) != t.blockN && (mmaN(s) % 8 != 0 || t.blockN % 16 != 0))
    return errorf("expected block_n (", t.blockN,
                  ") to be a multiple of 16 when it is split into two wgmma "
                  "chunks");
  if (pb->mode == Sm90ScalePlan::Mode::K && pb->outerBlock > 1 &&
      pb->outerBlock % t.blockN != 0 && pb->outerBlock % 8 != 0)
    return errorf("expected B's scale block along N (", pb->outerBlock,
                  ") to be a multiple of 8 or of block_n (", t.blockN, ")");
  // A tile whose B scale blocks start at a run-time column selects a block
  // per 8 columns: more registers, which UE8M0 decoding and tiles over 192
  // columns do not have (ptxas spills).
  const bool runtimeBlocks =
      pb->mode == Sm90ScalePlan::Mode::K && pb->outerBlock > 1 &&
      pb->outerBlock % t.blockN != 0 && t.blockN % pb->outerBlock != 0;
  if (runtimeBlocks && (pb->ue8m0 || t.blockN > 192))
    return errorf("expected block_n (", t.blockN,
                  ") to divide or be a multiple of B's scale block along N (",
                  pb->outerBlock, ")",
                  pb->ue8m0 ? " with UE8M0 scales" : " above 192 columns",
                  ": a tile whose scale blocks start at a run-time column "
                  "needs more registers");
  const bool clusterOk = (t.clusterM == 1 && t.clusterN == 1) ||
                         (t.clusterM == 2 && t.clusterN == 1) ||
                         (t.clusterM == 1 && t.clusterN == 2);
  if (!clusterOk)
    return errorf("expected a cluster of 1x1, 2x1 or 1x2 CTAs (TMA multicast "
                  "of B along M or of A along N), found ",
                  t.clusterM, "x", t.clusterN);
  if (t.clusterM == 2 && t.blockN % 16 != 0)
    return errorf("expected block_n to be a multiple of 16 with cluster_m 2 "
                  "(each CTA multicasts half of the B tile, in 8-row swizzle "
                  "atoms), found ",
                  t.blockN);
  if (t.ctaGroup != 1)
    return errorf("expected cta_group 1 on sm_90a, found ", t.ctaGroup);
  if (t.swizzleGroup < 1)
    return errorf("expected swizzle_group >= 1, found ", t.swizzleGroup);
  const int64_t groups = sm90KSlices(s);
  if (t.splitK < 1 || t.splitK > groups)
    return errorf("expected split_k in [1, ", groups,
                  "] (one slice per promotion group of K = ", s.k, "), found ",
                  t.splitK);
  if (t.splitK > 1 && t.overlap == PromotionOverlap::None &&
      t.blockN > kMaxSplitKBlockN)
    return errorf("expected block_n <= ", kMaxSplitKBlockN,
                  " with split_k > 1 (the reduction holds two accumulators), "
                  "found block_n ",
                  t.blockN, " with split_k ", t.splitK);
  if (t.tailSplit < 1 || t.tailSplit > kSm90MaxTailSplit)
    return errorf("expected tail_split in [1, ", kSm90MaxTailSplit, "], found ",
                  t.tailSplit);
  if (t.tailSplit > 1 && (t.splitK != 1 || !t.persistent))
    return errorf("expected split_k 1 and a persistent grid with tail_split ",
                  t.tailSplit,
                  " (the split tail replaces split-K), found "
                  "split_k ",
                  t.splitK, (t.persistent ? "" : ", not persistent"));
  // The reduction after the loop holds the sums and the loaded partials:
  // 256 columns (128 floats of each) spill (ptxas -v, compile matrix).
  if (t.tailSplit > 1 && t.blockN > kMaxTailSplitBlockN)
    return errorf("expected block_n <= ", kMaxTailSplitBlockN,
                  " with tail_split > 1 (the reduction of the split tiles "
                  "needs registers), found block_n ",
                  t.blockN);
  if (t.stages < 2)
    return errorf("expected at least 2 pipeline stages, found ", t.stages);
  const int smem = sm90SharedBytes(s);
  if (smem > kSm90MaxSharedBytes)
    return errorf("expected the kernel to fit in ", kSm90MaxSharedBytes,
                  " bytes of shared memory, but ", t.stages, " stages of ",
                  t.blockM, "x", t.blockN, " need ", smem, " (at most ",
                  sm90MaxStages(s), " stages fit)");
  return Status::ok();
}

namespace sm90 {
int sharedBytesWith(const KernelSpec &s, int epiBuffers) {
  // Mirrors Layout<Cfg> in sm90_gemm.cuh; the generated source static_asserts
  // that both agree.
  const TileConfig &t = s.tile;
  auto pa = planSm90Scales(s, true);
  auto pb = planSm90Scales(s, false);
  const bool kA = pa && pa->mode == Sm90ScalePlan::Mode::K;
  const bool kB = pb && pb->mode == Sm90ScalePlan::Mode::K;
  // Per-column B scales that vary along K are staged by the loader warp;
  // the other K scales have per-stage TMA slots (BLOCK_M floats for A, 128
  // bytes for B's block scales), used when their layout allows.
  const bool staged = kB && pb->outerBlock == 1;
  int64_t bytes = int64_t(t.stages) * (t.blockM + t.blockN) * 128;
  if (tmaStore(s))
    bytes +=
        int64_t(epiBuffers) * t.mathWarpgroups * 64 * epiCols(s) * outBytes(s);
  bytes = (bytes + 127) / 128 * 128;
  bytes += int64_t(t.stages) *
           ((kA ? scaleTmaSlotA(s) : 0) + (kB && !staged ? 32 : 0)) * 4;
  bytes += int64_t(t.stages) * (staged ? t.blockN : 0) * 4;
  bytes = (bytes + 7) / 8 * 8;
  bytes += 2 * int64_t(t.stages) * 8 + 16;
  // C by TMA into the staging buffers: a barrier per warpgroup and buffer.
  if (s.accumulate && tmaStore(s))
    bytes += int64_t(t.mathWarpgroups) * epiBuffers * 8;
  bytes += 1024; // alignment slack for the swizzled tiles
  return bytes > (int64_t(1) << 30) ? (1 << 30) : int(bytes);
}
} // namespace sm90

int sm90SharedBytes(const KernelSpec &s) {
  return sharedBytesWith(s, epiBuffers(s));
}

int sm90MaxStages(const KernelSpec &s) {
  KernelSpec probe = s;
  int best = 0;
  for (int st = 1; st <= 16; ++st) {
    probe.tile.stages = st;
    if (sm90SharedBytes(probe) <= kSm90MaxSharedBytes)
      best = st;
  }
  return best;
}

} // namespace fp8
