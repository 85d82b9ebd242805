//===- Sm90Gemm.cpp - Hopper scaled FP8 GEMM code generator --------------===//

#include "codegen/Sm90Gemm.h"
#include "codegen/Elementwise.h"
#include "codegen/Sm90Resources.h"

#include "core/Env.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace fp8 {

using namespace sm90;

static std::string modeName(Sm90ScalePlan::Mode m) {
  switch (m) {
  case Sm90ScalePlan::Mode::Tensor:
    return "kScaleTensor";
  case Sm90ScalePlan::Mode::Outer:
    return "kScaleOuter";
  case Sm90ScalePlan::Mode::K:
    return "kScaleK";
  }
  return "?";
}

/// The wgmma wrapper for this tile width and format pair.
static std::string emitMma(const KernelSpec &s) {
  const int n = mmaN(s);
  const int regs = n / 2;
  std::ostringstream os;
  os << "// wgmma.mma_async m64n" << n << "k32, " << ptxType(s.a.format)
     << " x " << ptxType(s.b.format) << " -> f32 (PTX ISA 9.7.15.5.2).\n";
  os << "__device__ __forceinline__ void mma_k32(float (&d)[" << regs
     << "], u64 da, u64 db, u32 scale_d) {\n";
  os << "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" << regs + 2
     << ", 0;\\n\"\n";
  os << "      \"wgmma.mma_async.sync.aligned.m64n" << n << "k32.f32."
     << ptxType(s.a.format) << "." << ptxType(s.b.format) << " {\"\n      \"";
  for (int i = 0; i < regs; ++i) {
    os << "%" << i << (i + 1 < regs ? "," : "");
    if (i % 16 == 15 && i + 1 < regs)
      os << "\"\n      \"";
  }
  os << "}, %" << regs << ", %" << regs + 1 << ", p, 1, 1;\\n}\\n\"\n";
  os << "      : ";
  for (int i = 0; i < regs; ++i) {
    os << "\"+f\"(d[" << i << "])" << (i + 1 < regs ? ", " : "");
    if (i % 8 == 7 && i + 1 < regs)
      os << "\n        ";
  }
  os << "\n      : \"l\"(da), \"l\"(db), \"r\"(scale_d));\n}\n";
  return os.str();
}

namespace {
/// A's K scales can come by TMA (f32, one per row; not in the masked
/// form, whose groups' scales are separate tensors).
bool scaleTmaA(const KernelSpec &s) {
  auto pa = planSm90Scales(s, true);
  return pa && pa->mode == Sm90ScalePlan::Mode::K && pa->outerBlock == 1 &&
         !pa->ue8m0 && s.kind != GemmKind::GroupedMasked;
}

int sm90ScaleBlocksB(const KernelSpec &s) {
  // Mirrors KScaleShape<Cfg>::kNb in sm90_promote.cuh (the generated source
  // static_asserts that both agree).
  auto pb = planSm90Scales(s, false);
  if (!pb || pb->mode != Sm90ScalePlan::Mode::K || pb->outerBlock == 1 ||
      pb->ue8m0)
    return 0;
  const int ro = int(pb->outerBlock), bn = s.tile.blockN;
  if (ro == 0 || ro % bn == 0)
    return 1;
  if (bn % ro == 0)
    return bn / ro;
  return (2 * ro - std::gcd(bn, ro) - 1 + bn) / ro;
}
} // namespace

namespace {
/// The spec as the source states it: the launch values (M; a K-grouped
/// GEMM's K) are 0 or dynamic, so one source serves every value.
KernelSpec sourceSpec(const KernelSpec &s) {
  KernelSpec o = s;
  o.m = kDynamic;
  if (s.kind == GemmKind::GroupedK)
    o.k = 0;
  return o;
}

const char *groupedName(GemmKind k) {
  switch (k) {
  case GemmKind::Dense:
    return "kDenseGemm";
  case GemmKind::GroupedContiguous:
    return "kGroupedContiguous";
  case GemmKind::GroupedMasked:
    return "kGroupedMasked";
  case GemmKind::GroupedK:
    return "kGroupedK";
  }
  return "?";
}
} // namespace

int sm90GroupBlocks(const KernelSpec &s) {
  if (!s.promotionInterval)
    return 1;
  const int64_t steps = *s.promotionInterval / 32;
  return int(std::lcm<int64_t>(steps, 4) / 4);
}

int64_t sm90KSlices(const KernelSpec &s) {
  const int64_t kBlocks = (s.k + 127) / 128;
  const int64_t groupBlocks = sm90GroupBlocks(s);
  return (kBlocks + groupBlocks - 1) / groupBlocks;
}

Sm90TailSchedule sm90TailSchedule(int64_t tiles, int64_t slots, int maxSplit,
                                  int64_t kSlices) {
  Sm90TailSchedule t;
  t.first = tiles;
  if (tiles <= 0 || slots <= 0)
    return t;
  // The last wave's tiles: all of them when there are fewer than slots.
  const int64_t rest = tiles % slots;
  if (rest == 0)
    return t;
  const int64_t split =
      std::min<int64_t>({int64_t(maxSplit), kSlices, slots / rest});
  if (split < 2)
    return t;
  t.first = tiles - rest;
  t.split = int(split);
  return t;
}

int sm90ScaleTmaOperands(const KernelSpec &s) {
  return (scaleTmaA(s) ? kSm90ScaleTmaA : 0) |
         (sm90ScaleBlocksB(s) > 0 ? kSm90ScaleTmaB : 0);
}

bool sm90HasTailBox(const KernelSpec &s) {
  return s.kind == GemmKind::Dense && s.tile.clusterN == 1;
}

bool sm90TailBox(const KernelSpec &s, int64_t m) {
  return sm90HasTailBox(s) && m > s.tile.blockM &&
         fp8k::gemmABoxRows<int64_t>(m, s.tile.blockM) > 0;
}

std::string sm90KernelName(const KernelSpec &s, int scaleTma, bool tailBox) {
  const int loaded = sm90ScaleTmaOperands(s) & ~scaleTma;
  std::string name = s.kernelName();
  if (loaded)
    name += std::string("_ld") + (loaded & kSm90ScaleTmaA ? "a" : "") +
            (loaded & kSm90ScaleTmaB ? "b" : "");
  if (tailBox)
    name += "_tail";
  return name;
}

Expected<GeneratedKernel> emitSm90Gemm(const KernelSpec &s,
                                       std::optional<int> scaleTmaArg,
                                       std::optional<bool> tailBoxArg) {
  FP8_RETURN_IF_ERROR(env::checkEnvironment());
  FP8_RETURN_IF_ERROR(checkSm90Spec(s));
  const int canTma = sm90ScaleTmaOperands(s);
  const int scaleTma = scaleTmaArg.value_or(canTma);
  if ((scaleTma & ~canTma) != 0)
    return errorf("expected the operands whose K scales come by TMA to be "
                  "a subset of ",
                  canTma,
                  " (bit 0 A, bit 1 B: f32 scales varying along K), "
                  "found ",
                  scaleTma);
  const bool tailBox =
      tailBoxArg.value_or(s.m != kDynamic && sm90TailBox(s, s.m));
  if (tailBox && !sm90HasTailBox(s))
    return errorf("expected a dense GEMM without a 1x2 cluster along N for "
                  "the tail-box kernel, found a ",
                  toString(s.kind), " GEMM with clusters ", s.tile.clusterM,
                  "x", s.tile.clusterN);
  const Sm90ScalePlan pa = *planSm90Scales(s, true);
  const Sm90ScalePlan pb = *planSm90Scales(s, false);
  const TileConfig &t = s.tile;
  const int threads = (t.mathWarpgroups + 1) * 128;
  const int smem = sm90SharedBytes(s);

  GeneratedKernel g;
  g.name = sm90KernelName(s, scaleTma, tailBox);
  g.arch = Arch::SM90a;
  LaunchInfo &l = g.launch;
  l.threads = threads;
  l.sharedBytes = smem;
  l.clusterX = t.clusterM * t.clusterN;
  l.clusterM = t.clusterM;
  l.clusterN = t.clusterN;
  l.persistent = t.persistent;
  l.blockM = t.blockM;
  l.blockN = t.blockN;
  l.splitK = t.splitK;
  l.tailSplit = t.tailSplit;
  l.kSlices = int(sm90KSlices(s));
  l.tmaStore = tmaStore(s);
  l.tailBox = tailBox;
  // With a cluster each CTA loads (and multicasts) half of the shared tile.
  l.tma.push_back({TmaPlan::Operand::A, 1, 128,
                   t.clusterN > 1 ? t.blockM / 2 : t.blockM, 128});
  l.tma.push_back({TmaPlan::Operand::B, 1, 128,
                   t.clusterM > 1 ? t.blockN / 2 : t.blockN, 128});
  const int chunkCols = outChunkCols(s);
  const int chunkBytes = chunkCols * outBytes(s);
  l.tma.push_back({TmaPlan::Operand::D, outBytes(s), chunkCols, 64,
                   chunkBytes >= 32 ? chunkBytes : 0});
  // K-varying f32 scales can travel with each pipeline stage by TMA (A:
  // [K blocks][M] with M contiguous, B: K blocks contiguous; 16-byte
  // pitches): this variant's descriptors; the consumers load the others.
  const int scaleBlocksB = sm90ScaleBlocksB(s);
  if (scaleTma & kSm90ScaleTmaA)
    l.tma.push_back({TmaPlan::Operand::ScaleA, 4, scaleTmaBoxA(s), 1, 0});
  if (scaleTma & kSm90ScaleTmaB)
    l.tma.push_back({TmaPlan::Operand::ScaleB, 4, 4, scaleBlocksB, 0});
  // Accumulate-into-C with a TMA store: C comes in D's staging boxes.
  if (s.accumulate && l.tmaStore)
    l.tma.push_back({TmaPlan::Operand::C, outBytes(s), chunkCols, 64,
                     chunkBytes >= 32 ? chunkBytes : 0});

  std::ostringstream os;
  os << "// Generated by the fp8 toolkit (codegen/Sm90Gemm.cpp): do not edit.\n"
     << "// KernelSpec: " << toJSON(sourceSpec(s)) << "\n"
     << (env::kernelDebug() ? "#define FP8_KERNEL_DEBUG 1\n" : "")
     << (env::kernelTrace() ? "#define FP8_KERNEL_TRACE 1\n" : "")
     << "#include \"fp8/sm90_common.cuh\"\n"
     << "#include \"fp8/sm90_params.h\"\n"
     << (s.epilogue ? "#include \"fp8/gemm_quantize.cuh\"\n" : "") << "\n"
     << "namespace fp8k {\n\n"
     << (s.epilogue ? emitEpilogueSource(*s.epilogue, s.out, t.blockN) + "\n"
                    : std::string())
     << "struct Cfg {\n"
     << "  static constexpr int kN = " << s.n << ";\n"
     << "  static constexpr int kK = " << sourceSpec(s).k << ";\n"
     << "  static constexpr int kGrouped = " << groupedName(s.kind) << ";\n"
     << "  static constexpr int kBlockM = " << t.blockM << ";\n"
     << "  static constexpr int kBlockN = " << t.blockN << ";\n"
     << "  static constexpr int kStages = " << t.stages << ";\n"
     << "  static constexpr int kMathWG = " << t.mathWarpgroups << ";\n"
     << "  static constexpr int kAcc = " << t.blockN / 2 << ";\n"
     << "  static constexpr int kMmaN = " << mmaN(s) << ";\n"
     << "  static constexpr int kNChunks = " << t.blockN / mmaN(s) << ";\n"
     << "  static constexpr int kAccChunk = " << mmaN(s) / 2 << ";\n"
     << "  // Overlapped promotion: 0 none, 1 alternating k-blocks, 2 N "
        "halves.\n"
     << "  static constexpr int kOverlap = "
     << (t.overlap == PromotionOverlap::None         ? 0
         : t.overlap == PromotionOverlap::AlternateK ? 1
                                                     : 2)
     << ";\n"

     << "  static constexpr int kPromoSteps = "
     << promotionToInt(s.promotionInterval) / 32 << "; // promotion interval "
     << promotionToInt(s.promotionInterval) << " / k32\n"
     << "  static constexpr int kGroupBlocks = " << sm90GroupBlocks(s)
     << "; // k-blocks per slice unit (whole promotion groups)\n"
     << "  static constexpr int kSplitK = " << t.splitK << ";\n"
     << "  static constexpr int kTailSplit = " << t.tailSplit << ";\n"
     << "  static constexpr int kClusterM = " << t.clusterM << ";\n"
     << "  static constexpr int kClusterN = " << t.clusterN << ";\n"
     << "  static constexpr bool kRasterAlongN = "
     << (t.raster == Raster::AlongN ? "true" : "false") << ";\n"
     << "  static constexpr int kGroup = " << t.swizzleGroup << ";\n"
     << "  static constexpr int kSaMode = " << modeName(pa.mode) << ";\n"
     << "  static constexpr int kSaOuterBlock = " << pa.outerBlock << ";\n"
     << "  static constexpr int kSaKBlock = " << pa.kBlock << ";\n"
     << "  static constexpr bool kSaE8 = " << (pa.ue8m0 ? "true" : "false")
     << ";\n"
     << "  static constexpr int kSbMode = " << modeName(pb.mode) << ";\n"
     << "  static constexpr int kSbOuterBlock = " << pb.outerBlock << ";\n"
     << "  static constexpr int kSbKBlock = " << pb.kBlock << ";\n"
     << "  static constexpr bool kSbE8 = " << (pb.ue8m0 ? "true" : "false")
     << ";\n"
     << "  // K scales by TMA with each stage: bit 0 A, bit 1 B (else "
        "loaded).\n"
     << "  static constexpr int kScaleTma = " << scaleTma << ";\n"
     << "  // The last M tile's A through descriptors of its own (tail box).\n"
     << "  static constexpr bool kATail = " << (tailBox ? "true" : "false")
     << ";\n"
     << "  static constexpr bool kOutF32 = "
     << (s.out == DType::F32 ? "true" : "false") << ";\n"
     << "  static constexpr bool kAccumulate = "
     << (s.accumulate ? "true" : "false") << ";\n"
     << "  static constexpr bool kTmaStore = "
     << (l.tmaStore ? "true" : "false") << ";\n"
     << "  // D's amax to GemmParams::amax (sm90_epilogue.cuh, "
        "join_tile_amax).\n"
     << "  static constexpr bool kAmaxOut = " << (s.amaxOut ? "true" : "false")
     << ";\n"
     << "  // The quantizing epilogue (gemm_quantize.cuh): D holds FP8 codes.\n"
     << "  static constexpr bool kEpilogue = "
     << (s.epilogue ? "true" : "false") << ";\n"
     << (s.epilogue ? "  using Epi = fp8k::Epi;\n"
                      "  using EpiProg = fp8k::EpiProg;\n"
                    : "")
     << "  static constexpr int kOutChunkCols = " << chunkCols << ";\n"
     << "  static constexpr int kEpiCols = " << epiCols(s) << ";\n"
     << "  static constexpr int kEpiBuffers = " << epiBuffers(s) << ";\n"
     << "  static constexpr int kSharedBytes = " << smem << ";\n"
     << "  // setmaxnreg: the producer gives registers to the consumers.\n"
     << "  static constexpr int kProducerRegs = " << producerRegs(s) << ";\n"
     << "  static constexpr int kConsumerRegs = " << consumerRegs(s) << ";\n"
     << "};\n\n"
     << emitMma(s) << "\n"
     << "} // namespace fp8k\n\n"
     << "#include \"fp8/sm90_gemm.cuh\"\n\n"
     << "static_assert(fp8k::Layout<fp8k::Cfg>::kSmemTotal + 1024 == "
        "fp8k::Cfg::kSharedBytes,\n"
     << "              \"host and device shared-memory layouts disagree\");\n"
     << "static_assert(fp8k::KScaleShape<fp8k::Cfg>::kNb == "
     << std::max(scaleBlocksB, 1) << ",\n"
     << "              \"host and device B scale boxes disagree\");\n\n"
     << "extern \"C\" __global__ void __launch_bounds__(" << threads << ", 1)\n"
     << g.name << "(const __grid_constant__ fp8k::TmaDesc tmap_a,\n"
     << "    const __grid_constant__ fp8k::TmaDesc tmap_b,\n"
     << "    const __grid_constant__ fp8k::TmaDesc tmap_d,\n"
     << "    const __grid_constant__ fp8k::TmaDesc tmap_sa,\n"
     << "    const __grid_constant__ fp8k::TmaDesc tmap_sb,\n"
     << "    const __grid_constant__ fp8k::TmaDesc tmap_c,\n"
     << (tailBox ? "    const __grid_constant__ fp8k::TmaDesc tmap_a_tail,\n"
                   "    const __grid_constant__ fp8k::TmaDesc tmap_sa_tail,\n"
                 : "")
     << "    const fp8k::GemmParams params) {\n"
     << (env::kernelDebug()
             ? "  if (threadIdx.x == 0 && blockIdx.x == 0)\n"
               "    printf(\"fp8 kernel: start, grid %d, m %d\\n\", "
               "gridDim.x, params.m);\n"
             : "")
     << "  fp8k::gemm_body<fp8k::Cfg>(tmap_a, tmap_b, tmap_d, tmap_sa, "
        "tmap_sb,\n"
     << "                             tmap_c, "
     << (tailBox ? "tmap_a_tail, tmap_sa_tail" : "tmap_a, tmap_sa")
     << ", params);\n"
     << "}\n";
  g.source = os.str();
  return g;
}

} // namespace fp8
