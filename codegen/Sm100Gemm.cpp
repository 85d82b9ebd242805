//===- Sm100Gemm.cpp - Blackwell block-scaled FP8 GEMM code generator -----===//

#include "codegen/Sm100Gemm.h"
#include "codegen/Sm100ScaleLayout.h"
#include "core/Env.h"
#include "core/RecipeRules.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace fp8 {

namespace {
int outBytes(const KernelSpec &s) { return s.out == DType::F32 ? 4 : 2; }

bool tmaStore(const KernelSpec &s) { return (s.n * outBytes(s)) % 16 == 0; }

bool varyAlongK(const OperandSpec &o) {
  return kBlock(o.granularity, o.layout) != Granularity::kWhole;
}

/// Block-scaled kernel: some scale varies along K.
bool blockScaled(const KernelSpec &s) {
  return varyAlongK(s.a) || varyAlongK(s.b);
}

bool powerOfTwoFormat(ScaleFormat f) {
  return f == ScaleFormat::F32Pow2 || f == ScaleFormat::UE8M0;
}

/// Scale atoms of B a stage needs: the most 128-row atoms any B tile's
/// columns [n0, n0 + block_n) touch (n0 = nb * block_n; the offsets inside
/// an atom repeat with a period dividing 128).
int sfbAtoms(const KernelSpec &s) {
  if (!blockScaled(s))
    return 0;
  const int bn = s.tile.blockN;
  int most = 0;
  for (int nb = 0; nb < 128; ++nb) {
    const int offset = (nb * bn) % fp8k::sf::kAtomRows;
    most = std::max(most, (offset + bn + fp8k::sf::kAtomRows - 1) /
                              fp8k::sf::kAtomRows);
  }
  return most;
}

int sfSlotColumns(const KernelSpec &s) {
  return blockScaled(s) ? 4 + 4 * sfbAtoms(s) : 0;
}

/// Two accumulators (MMA of the next tile overlaps the epilogue) when they
/// and the two scale slots fit the 512 tensor-memory columns.
int accStages(const KernelSpec &s) {
  return 2 * s.tile.blockN + 2 * sfSlotColumns(s) <= kSm100TmemColumns ? 2 : 1;
}

int tmemColumns(const KernelSpec &s) {
  const int need = accStages(s) * s.tile.blockN + 2 * sfSlotColumns(s);
  int cols = 32; // tcgen05.alloc: a power of two >= 32
  while (cols < need)
    cols *= 2;
  return cols;
}

/// Mirrors Sm100Layout<Cfg> in sm100_gemm.cuh; the generated source
/// static_asserts that both agree.
int sharedBytesWith(const KernelSpec &s, int epiBuffers) {
  const TileConfig &t = s.tile;
  const int64_t bRows = t.ctaGroup == 2 ? t.blockN / 2 : t.blockN;
  const int64_t sfa = blockScaled(s) ? fp8k::sf::kAtomBytes : 0;
  const int64_t sfb = int64_t(sfbAtoms(s)) * fp8k::sf::kAtomBytes;
  int64_t bytes = int64_t(t.stages) * (128 * 128 + bRows * 128 + sfa + sfb);
  bytes = (bytes + 1023) / 1024 * 1024;
  if (tmaStore(s))
    bytes += int64_t(4 * t.mathWarpgroups) * epiBuffers * 32 * 32 * outBytes(s);
  bytes += (2 * int64_t(t.stages) + 2 * accStages(s)) * 8 + 16;
  bytes += 1024; // alignment slack for the swizzled tiles
  return bytes > (int64_t(1) << 30) ? (1 << 30) : int(bytes);
}

int maxStagesWith(const KernelSpec &s, int epiBuffers) {
  KernelSpec probe = s;
  int best = 0;
  for (int st = 1; st <= 16; ++st) {
    probe.tile.stages = st;
    if (sharedBytesWith(probe, epiBuffers) <= kSm100MaxSharedBytes)
      best = st;
  }
  return best;
}

/// Two staging buffers per epilogue warp (a chunk's conversion overlaps the
/// previous chunk's store) unless the second one would cost a stage the
/// pipeline needs.
int epiBuffers(const KernelSpec &s) {
  if (!tmaStore(s))
    return 1;
  return maxStagesWith(s, 2) >= std::min(maxStagesWith(s, 1), 4) ? 2 : 1;
}

/// The instruction-descriptor code of an FP8 format (E4M3 = 0, E5M2 = 1).
uint32_t formatCode(DType t) { return t == DType::E5M2 ? 1u : 0u; }

Expected<Sm100ScalePlan> planScales(const KernelSpec &s, bool isA) {
  const OperandSpec &o = isA ? s.a : s.b;
  const Granularity &g = o.granularity;
  const char *name = isA ? "A" : "B";
  Sm100ScalePlan plan;
  plan.ue8m0 = g.scale == ScaleFormat::UE8M0;
  if (blockScaled(s)) {
    plan.mode = Sm100ScalePlan::Mode::Block;
    if (!powerOfTwoFormat(g.scale))
      return errorf(
          "expected power-of-two scales (f32_pow2 or ue8m0) for ", name, "'s ",
          toString(g), " granularity on sm_100a, found ", toString(g.scale),
          ": scales are applied as UE8M0 block scales of the MMA when any "
          "scale varies along K; quantize with f32_pow2 or ue8m0 scales");
    return plan;
  }
  plan.mode = g.rows == Granularity::kWhole ? Sm100ScalePlan::Mode::Tensor
                                            : Sm100ScalePlan::Mode::Outer;
  plan.outerBlock = g.rows;
  return plan;
}
} // namespace

uint32_t sm100InstrDesc(const KernelSpec &s) {
  const uint32_t m = 128u * uint32_t(s.tile.ctaGroup);
  const uint32_t n = uint32_t(s.tile.blockN);
  uint32_t d = 0;
  d |= formatCode(s.a.format) << 7;
  d |= formatCode(s.b.format) << 10;
  d |= (n >> 3) << 17;
  d |= (m >> 4) << 24;
  if (blockScaled(s))
    d |= 1u << 23; // scale type UE8M0
  else
    d |= 1u << 4; // D type F32
  return d;
}

Status checkSm100Recipe(const KernelSpec &s) {
  if (s.a.layout != Layout::KMajor || s.b.layout != Layout::KMajor)
    return errorf("expected K-major A and B on sm_100a (the generator reads "
                  "both operands and their scales K-major), found A ",
                  toString(s.a.layout), " and B ", toString(s.b.layout),
                  ": transpose the operand first");
  FP8_RETURN_IF_ERROR(checkGemmRecipe(s.a, s.b, s.promotionInterval, s.out));
  auto pa = planScales(s, true);
  if (!pa)
    return pa.status();
  auto pb = planScales(s, false);
  if (!pb)
    return pb.status();
  if (s.promotionInterval && *s.promotionInterval != kMmaK)
    return errorf("expected promotion interval 32 (or 0) on sm_100a, found ",
                  *s.promotionInterval,
                  ": every K = 32 tcgen05.mma step adds its (block-scaled) "
                  "products to the FP32 accumulator in tensor memory, which "
                  "is promotion every 32 elements");
  return Status::ok();
}

Status checkSm100Spec(const KernelSpec &s) {
  if (s.arch != Arch::SM100a)
    return errorf("expected arch sm_100a for the Blackwell generator, found ",
                  toString(s.arch));
  FP8_RETURN_IF_ERROR(checkDenseGemmShape(s));
  if (s.epilogue)
    return errorf("the sm_100a generator has no quantizing epilogue (it is "
                  "generated for sm_90a): quantize the result in a step of "
                  "its own");
  if (s.amaxOut)
    return errorf("the sm_100a generator has no amax output (it is generated "
                  "for sm_90a): take the amax in the quantize step");
  FP8_RETURN_IF_ERROR(checkSm100Recipe(s));

  const TileConfig &t = s.tile;
  if (t.blockK != 128)
    return errorf("expected block_k 128 on sm_100a (one 128-byte swizzle "
                  "atom of FP8, four K = 32 MMA steps), found ",
                  t.blockK);
  if (t.blockM != 128)
    return errorf("expected block_m 128 on sm_100a (rows per CTA: one "
                  "128-lane accumulator; cta_group 2 pairs two CTAs into a "
                  "256-row MMA), found ",
                  t.blockM);
  if (t.mathWarpgroups != 1 && t.mathWarpgroups != 2)
    return errorf("expected math_warpgroups 1 or 2 on sm_100a (the epilogue "
                  "warpgroups that read the accumulator), found ",
                  t.mathWarpgroups);
  const int step = 32 * t.mathWarpgroups;
  if (t.blockN < step || t.blockN > 256 || t.blockN % step != 0)
    return errorf("expected block_n to be a multiple of ", step, " in [", step,
                  ", 256] on sm_100a (each of the ", 4 * t.mathWarpgroups,
                  " epilogue warps reads whole 32-column chunks), found ",
                  t.blockN);
  if (t.ctaGroup != 1 && t.ctaGroup != 2)
    return errorf("expected cta_group 1 or 2 on sm_100a, found ", t.ctaGroup);
  if (t.overlap != PromotionOverlap::None)
    return errorf("expected overlap 'none' on sm_100a (promotion overlap is "
                  "an sm_90a wgmma schedule; tcgen05 accumulates in tensor "
                  "memory), found '",
                  toString(t.overlap), "'");
  if (t.clusterN != 1 || (t.clusterM != 1 && t.clusterM != 2))
    return errorf("expected a cluster of 1x1 or 2x1 CTAs on sm_100a (a CTA "
                  "pair along M), found ",
                  t.clusterM, "x", t.clusterN);
  if (t.ctaGroup == 2 && t.clusterM != 2)
    return errorf("expected cluster_m 2 with cta_group 2 (the MMA spans the "
                  "two CTAs of a cluster pair), found cluster_m ",
                  t.clusterM);
  if (t.splitK != 1)
    return errorf("expected split_k 1 on sm_100a (split-K is not implemented "
                  "for Blackwell), found ",
                  t.splitK);
  if (t.tailSplit != 1)
    return errorf("expected tail_split 1 on sm_100a (split tails are not "
                  "implemented for Blackwell), found ",
                  t.tailSplit);
  if (t.swizzleGroup < 1)
    return errorf("expected swizzle_group >= 1, found ", t.swizzleGroup);
  if (t.stages < 2)
    return errorf("expected at least 2 pipeline stages, found ", t.stages);
  const int smem = sm100SharedBytes(s);
  if (smem > kSm100MaxSharedBytes)
    return errorf("expected the kernel to fit in ", kSm100MaxSharedBytes,
                  " bytes of shared memory, but ", t.stages, " stages of ",
                  t.blockM, "x", t.blockN, " need ", smem, " (at most ",
                  sm100MaxStages(s), " stages fit)");
  const int cols = accStages(s) * t.blockN + 2 * sfSlotColumns(s);
  if (cols > kSm100TmemColumns)
    return errorf("expected the accumulator and scales to fit the ",
                  kSm100TmemColumns, " tensor-memory columns, found ", cols);
  return Status::ok();
}

Expected<Sm100Plan> planSm100Gemm(const KernelSpec &s) {
  FP8_RETURN_IF_ERROR(checkSm100Spec(s));
  Sm100Plan plan;
  plan.blockScaled = blockScaled(s);
  plan.a = *planScales(s, true);
  plan.b = *planScales(s, false);
  plan.mmaM = 128 * s.tile.ctaGroup;
  plan.sfbAtoms = sfbAtoms(s);
  plan.accStages = accStages(s);
  plan.tmemColumns = tmemColumns(s);
  plan.epiBuffers = epiBuffers(s);
  plan.tmaStore = tmaStore(s);
  plan.idesc = sm100InstrDesc(s);
  plan.threads = 64 + 128 * s.tile.mathWarpgroups;
  plan.sharedBytes = sm100SharedBytes(s);
  return plan;
}

int sm100SharedBytes(const KernelSpec &s) {
  return sharedBytesWith(s, epiBuffers(s));
}

int sm100MaxStages(const KernelSpec &s) {
  KernelSpec probe = s;
  int best = 0;
  for (int st = 1; st <= 16; ++st) {
    probe.tile.stages = st;
    if (sm100SharedBytes(probe) <= kSm100MaxSharedBytes)
      best = st;
  }
  return best;
}

namespace {
std::string modeName(Sm100ScalePlan::Mode m) {
  switch (m) {
  case Sm100ScalePlan::Mode::Tensor:
    return "kScaleTensor";
  case Sm100ScalePlan::Mode::Outer:
    return "kScaleOuter";
  case Sm100ScalePlan::Mode::Block:
    return "kScaleK";
  }
  return "?";
}

std::string hex(uint32_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

/// The tcgen05 instructions whose spelling depends on the spec: allocation,
/// scale copies, the MMA, and the commits, with their cta_group.
std::string emitInstructions(const KernelSpec &s, const Sm100Plan &plan) {
  const std::string cg = "cta_group::" + std::to_string(s.tile.ctaGroup);
  const std::string cols = std::to_string(plan.tmemColumns);
  const bool cluster = s.tile.clusterM > 1;
  const bool pair = s.tile.ctaGroup == 2;
  std::ostringstream os;
  os << "// Tensor memory: " << cols << " columns"
     << (pair ? ", allocated collectively by one warp of each CTA of the pair"
              : "")
     << " (PTX ISA, tcgen05.alloc).\n"
     << "__device__ __forceinline__ void tmem_alloc(u32 slot) {\n"
     << "  asm volatile(\"tcgen05.alloc." << cg
     << ".sync.aligned.shared::cta.b32 [%0], " << cols
     << ";\" ::\"r\"(slot) : \"memory\");\n}\n"
     << "__device__ __forceinline__ void tmem_relinquish() {\n"
     << "  asm volatile(\"tcgen05.relinquish_alloc_permit." << cg
     << ".sync.aligned;\" ::: \"memory\");\n}\n"
     << "__device__ __forceinline__ void tmem_dealloc(u32 taddr) {\n"
     << "  asm volatile(\"tcgen05.dealloc." << cg << ".sync.aligned.b32 %0, "
     << cols << ";\" ::\"r\"(taddr) : \"memory\");\n}\n\n";

  os << "// One scale atom (32 lines x 16 bytes) from shared memory to 4 "
        "tensor-memory\n// columns of all 128 lanes (PTX ISA, tcgen05.cp "
        "32x128b.warpx4).\n"
     << "__device__ __forceinline__ void sf_copy(u32 taddr, u64 desc) {\n";
  if (plan.blockScaled)
    os << "  asm volatile(\"tcgen05.cp." << cg
       << ".32x128b.warpx4 [%0], %1;\" ::\"r\"(taddr), \"l\"(desc)\n"
       << "               : \"memory\");\n";
  else
    os << "  (void)taddr, (void)desc; // no block scales: never called\n";
  os << "}\n\n";

  os << "// D[tmem] (+)= A[smem] * B[smem]^T, M = " << plan.mmaM
     << ", N = " << s.tile.blockN << ", K = 32, "
     << (s.a.format == DType::E5M2 ? "e5m2" : "e4m3") << " x "
     << (s.b.format == DType::E5M2 ? "e5m2" : "e4m3") << " -> f32"
     << (plan.blockScaled ? ", UE8M0 scales per 32 K elements" : "")
     << "\n// (PTX ISA, tcgen05.mma"
     << (plan.blockScaled ? "; the instruction descriptor selects each "
                            "operand's scale byte"
                          : "")
     << ").\n"
     << "__device__ __forceinline__ void mma_k32(u32 d, u64 adesc, u64 bdesc, "
        "u32 idesc,\n"
     << "                                        u32 sfa, u32 sfb, u32 acc) "
        "{\n";
  if (plan.blockScaled)
    os << "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %6, 0;\\n\"\n"
       << "               \"tcgen05.mma." << cg
       << ".kind::mxf8f6f4.block_scale.block32 \"\n"
       << "               \"[%0], %1, %2, %3, [%4], [%5], p;\\n}\\n\" "
          "::\"r\"(d),\n"
       << "               \"l\"(adesc), \"l\"(bdesc), \"r\"(idesc), "
          "\"r\"(sfa), \"r\"(sfb),\n"
       << "               \"r\"(acc) : \"memory\");\n";
  else
    os << "  (void)sfa, (void)sfb;\n"
       << "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %4, 0;\\n\"\n"
       << "               \"tcgen05.mma." << cg << ".kind::f8f6f4 \"\n"
       << "               \"[%0], %1, %2, %3, p;\\n}\\n\" ::\"r\"(d), "
          "\"l\"(adesc),\n"
       << "               \"l\"(bdesc), \"r\"(idesc), \"r\"(acc) : "
          "\"memory\");\n";
  os << "}\n\n";

  auto commit = [&](const char *fn, bool multicast, const char *what) {
    os << "// " << what << "\n"
       << "__device__ __forceinline__ void " << fn << "(u32 bar) {\n";
    if (multicast)
      os << "  asm volatile(\"tcgen05.commit." << cg
         << ".mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
            "\"\n"
         << "               \"[%0], %1;\" ::\"r\"(bar), \"h\"((unsigned "
            "short)0x3)\n"
         << "               : \"memory\");\n";
    else
      os << "  asm volatile(\"tcgen05.commit." << cg
         << ".mbarrier::arrive::one.shared::cluster.b64 [%0];\" "
            "::\"r\"(bar)\n"
         << "               : \"memory\");\n";
    os << "}\n";
  };
  commit("commit_stage", cluster,
         cluster ? "A stage is free once the MMAs of both CTAs reading it "
                   "completed: arrive on\n// the stage's barrier in both "
                   "(PTX ISA, tcgen05.commit .multicast::cluster)."
                 : "A stage is free once the MMAs reading it completed (PTX "
                   "ISA, tcgen05.commit).");
  commit("commit_accum", pair,
         pair ? "The accumulators of both CTAs of the pair are complete: "
                "arrive on both\n// CTAs' barriers."
              : "The accumulator is complete.");
  return os.str();
}
} // namespace

Expected<GeneratedKernel> emitSm100Gemm(const KernelSpec &s) {
  FP8_RETURN_IF_ERROR(env::checkEnvironment());
  auto planOr = planSm100Gemm(s);
  if (!planOr)
    return planOr.status();
  const Sm100Plan &plan = *planOr;
  const TileConfig &t = s.tile;

  GeneratedKernel g;
  g.name = s.kernelName();
  g.arch = Arch::SM100a;
  LaunchInfo &l = g.launch;
  l.threads = plan.threads;
  l.sharedBytes = plan.sharedBytes;
  l.clusterX = t.clusterM;
  l.clusterM = t.clusterM;
  l.clusterN = 1;
  l.persistent = t.persistent;
  l.blockM = 128;
  l.blockN = t.blockN;
  l.splitK = 1;
  l.tmaStore = plan.tmaStore;
  // Kernel parameters: A, B, scales of A, scales of B, D (TMA descriptors),
  // then fp8k::Sm100Params. The scale descriptors view the packed scales
  // (codegen/Sm100ScaleLayout.h) as [total_bytes / 16, 16] bytes; they are
  // unused (any valid descriptor) without block scales.
  const int bLoadRows = t.clusterM == 2 ? t.blockN / 2 : t.blockN;
  l.tma.push_back({TmaPlan::Operand::A, 1, 128, 128, 128});
  l.tma.push_back({TmaPlan::Operand::B, 1, 128, bLoadRows, 128});
  l.tma.push_back({TmaPlan::Operand::ScaleA, 1, fp8k::sf::kLineBytes,
                   fp8k::sf::kAtomLines, 0});
  l.tma.push_back({TmaPlan::Operand::ScaleB, 1, fp8k::sf::kLineBytes,
                   fp8k::sf::kAtomLines * std::max(plan.sfbAtoms, 1), 0});
  l.tma.push_back({TmaPlan::Operand::D, outBytes(s), 32, 32, 32 * outBytes(s)});

  std::ostringstream os;
  os << "// Generated by the fp8 toolkit (codegen/Sm100Gemm.cpp): do not "
        "edit.\n"
     << "// Blackwell sm_100a: compile-verified only, never run on a GPU "
        "(docs/blackwell.md).\n"
     << "// KernelSpec: " << toJSON(s) << "\n"
     << (env::kernelDebug() ? "#define FP8_KERNEL_DEBUG 1\n" : "")
     << "#include \"fp8/sm100_common.cuh\"\n\n"
     << "namespace fp8k {\n\n"
     << "struct Cfg {\n"
     << "  static constexpr int kN = " << s.n << ";\n"
     << "  static constexpr int kK = " << s.k << ";\n"
     << "  static constexpr int kBlockN = " << t.blockN << ";\n"
     << "  static constexpr int kStages = " << t.stages << ";\n"
     << "  static constexpr int kEpiWG = " << t.mathWarpgroups << ";\n"
     << "  static constexpr int kCtaGroup = " << t.ctaGroup
     << "; // MMA M = " << plan.mmaM << "\n"
     << "  static constexpr int kClusterM = " << t.clusterM << ";\n"
     << "  static constexpr bool kRasterAlongN = "
     << (t.raster == Raster::AlongN ? "true" : "false") << ";\n"
     << "  static constexpr int kGroup = " << t.swizzleGroup << ";\n"
     << "  static constexpr bool kBlockScaled = "
     << (plan.blockScaled ? "true" : "false") << ";\n"
     << "  static constexpr int kSfbAtoms = " << plan.sfbAtoms << ";\n"
     << "  static constexpr int kSaMode = " << modeName(plan.a.mode) << ";\n"
     << "  static constexpr int kSaOuterBlock = " << plan.a.outerBlock << ";\n"
     << "  static constexpr bool kSaE8 = " << (plan.a.ue8m0 ? "true" : "false")
     << ";\n"
     << "  static constexpr int kSbMode = " << modeName(plan.b.mode) << ";\n"
     << "  static constexpr int kSbOuterBlock = " << plan.b.outerBlock << ";\n"
     << "  static constexpr bool kSbE8 = " << (plan.b.ue8m0 ? "true" : "false")
     << ";\n"
     << "  static constexpr bool kOutF32 = "
     << (s.out == DType::F32 ? "true" : "false") << ";\n"
     << "  static constexpr bool kAccumulate = "
     << (s.accumulate ? "true" : "false") << ";\n"
     << "  static constexpr bool kTmaStore = "
     << (plan.tmaStore ? "true" : "false") << ";\n"
     << "  static constexpr int kEpiBuffers = " << plan.epiBuffers << ";\n"
     << "  static constexpr int kAccStages = " << plan.accStages << ";\n"
     << "  static constexpr int kTmemCols = " << plan.tmemColumns << ";\n"
     << "  static constexpr int kSharedBytes = " << plan.sharedBytes << ";\n"
     << "  // Instruction descriptor: "
     << (plan.blockScaled ? "kind::mxf8f6f4, scale type UE8M0"
                          : "kind::f8f6f4, D f32")
     << ", A " << (s.a.format == DType::E5M2 ? "e5m2" : "e4m3") << ", B "
     << (s.b.format == DType::E5M2 ? "e5m2" : "e4m3") << ", K-major, N "
     << t.blockN << ", M " << plan.mmaM << ".\n"
     << "  static constexpr u32 kIdesc = " << hex(plan.idesc) << "u;\n"
     << "};\n\n"
     << emitInstructions(s, plan) << "\n"
     << "} // namespace fp8k\n\n"
     << "#include \"fp8/sm100_gemm.cuh\"\n\n"
     << "static_assert(fp8k::Sm100Layout<fp8k::Cfg>::kSmemTotal + 1024 == "
        "fp8k::Cfg::kSharedBytes,\n"
     << "              \"host and device shared-memory layouts disagree\");\n\n"
     << "extern \"C\" __global__ void __launch_bounds__(" << plan.threads
     << ", 1)\n"
     << g.name << "(const __grid_constant__ fp8k::TmaDesc tmap_a,\n"
     << "    const __grid_constant__ fp8k::TmaDesc tmap_b,\n"
     << "    const __grid_constant__ fp8k::TmaDesc tmap_sfa,\n"
     << "    const __grid_constant__ fp8k::TmaDesc tmap_sfb,\n"
     << "    const __grid_constant__ fp8k::TmaDesc tmap_d,\n"
     << "    const fp8k::Sm100Params params) {\n"
     << "  fp8k::sm100_gemm_body<fp8k::Cfg>(tmap_a, tmap_b, tmap_sfa, "
        "tmap_sfb, tmap_d,\n"
     << "                                   params);\n"
     << "}\n";
  g.source = os.str();
  return g;
}

//===----------------------------------------------------------------------===//
// Heuristic (untuned: no Blackwell GPU to measure on)
//===----------------------------------------------------------------------===//

ConfigChoice selectSm100Config(const KernelSpec &spec, int smCount) {
  const int64_t m = std::max<int64_t>(spec.m, 1);
  const int64_t n = std::max<int64_t>(spec.n, 1);
  const int64_t kBlocks = (std::max<int64_t>(spec.k, 1) + 127) / 128;
  const int64_t mTiles = (m + 127) / 128;
  const int sms = std::max(smCount, 2);

  ConfigChoice best;
  best.predictedCost = 1e300;
  for (int cg : {1, 2}) {
    if (cg == 2 && mTiles < 4)
      continue;
    for (int bn : {256, 224, 192, 160, 128, 96, 64}) {
      KernelSpec probe = spec;
      probe.tile = TileConfig();
      probe.tile.blockN = bn;
      probe.tile.mathWarpgroups = bn % 64 == 0 ? 2 : 1;
      probe.tile.ctaGroup = cg;
      probe.tile.clusterM = cg;
      probe.tile.stages = 2;
      probe.tile.stages = std::min(sm100MaxStages(probe), 8);
      if (!checkSm100Spec(probe).isOk())
        continue;
      const int64_t units = ((mTiles + cg - 1) / cg) * ((n + bn - 1) / bn);
      const int64_t slots = sms / cg;
      const int64_t waves = (units + slots - 1) / slots;
      // Per unit and k-block each SM multiplies 128 rows by bn columns (a
      // fixed cost plus one proportional to bn); a pair halves each CTA's B
      // traffic, credited 10%. Guesses, to be measured on a B200.
      double cost = double(waves) * double(kBlocks + 2) * (64.0 + bn);
      if (cg == 2)
        cost *= 0.9;
      if (cost < best.predictedCost * 0.995) {
        best.tile = probe.tile;
        best.predictedCost = cost;
        std::ostringstream os;
        os << units << (cg == 2 ? " pair units of 256x" : " tiles of 128x")
           << bn << " over " << sms << " SMs (" << waves << " wave"
           << (waves > 1 ? "s" : "") << "), cta_group " << cg << ", "
           << probe.tile.stages << " stages (untuned model)";
        best.reason = os.str();
      }
    }
  }
  if (best.reason.empty()) {
    KernelSpec probe = spec;
    probe.tile = TileConfig();
    best.reason =
        "no legal sm_100a configuration: " + checkSm100Spec(probe).message();
  }
  best.tile.raster = Raster::AlongN;
  best.tile.swizzleGroup = 8;
  best.tile.persistent = true;
  return best;
}

} // namespace fp8
