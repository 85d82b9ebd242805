//===- EmitKernels.cpp - The kernels EmulatedKernelsTest runs on the CPU --===//
//
//   fp8-emit-emulated-kernels OUTDIR COUNT EPILOGUES
//
// Writes OUTDIR/kernel<i>.cpp, the translation unit codegen emits for each
// spec of kSpecs (exactly what NVRTC compiles), and OUTDIR/registry.inc,
// the table EmulatedKernelsTest runs them from: the spec's JSON, the entry
// points' names and the entry points, in launch order. Likewise
// OUTDIR/epilogue<i>.cpp, the part of a GEMM translation unit its
// quantizing epilogue reads (emitEpilogueSource) with
// codegen/kernels/gemm_quantize.cuh and an entry point that quantizes one
// warpgroup's slab, for each GEMM spec of epilogueSpecs, and
// OUTDIR/epilogues.inc, their table (EmulatedEpilogueTest). The build
// compiles each with g++ and the CUDA emulator (CudaEmulator.h); COUNT and
// EPILOGUES are the numbers of specs the build expects.
//
//===----------------------------------------------------------------------===//

#include "codegen/Elementwise.h"
#include "test/runtime/EwTestPrograms.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <tuple>
#include <vector>

using namespace fp8;

namespace {
using A = EwArg;

/// RMSNorm's normalization (examples/llama-layer.mlir): x * rsqrt(sum / n
/// + eps) rounded to bf16, times the gain; the row sums broadcast along the
/// row, the gain along the columns.
EwProgram rmsnorm() {
  EwProgram p;
  p.inputs = {DType::BF16, DType::F32, DType::BF16};
  p.broadcast = {EwBroadcast::None, EwBroadcast::Row, EwBroadcast::Col};
  p.instrs = {{EwOp::Convert, {A::input(0)}, DType::F32},
              {EwOp::Mul, {A::input(1), A::constant(1.0f / 64)}, DType::F32},
              {EwOp::Add, {A::result(1), A::constant(1e-5f)}, DType::F32},
              {EwOp::Rsqrt, {A::result(2)}, DType::F32},
              {EwOp::Mul, {A::result(0), A::result(3)}, DType::F32},
              {EwOp::Convert, {A::result(4)}, DType::BF16},
              {EwOp::Mul, {A::input(2), A::result(5)}, DType::BF16}};
  p.result = A::result(6);
  return p;
}

/// rmsnorm() with its row sums computed by the quantize
/// (ElementwiseSpec::rowSum), as the passes write it: the sums go last.
ElementwiseSpec rmsnormWithSum(Granularity g, DType fmt) {
  ElementwiseSpec s;
  s.kind = AuxKind::Quantize;
  s.program = rmsnormProgram(1.0f / 64, 1e-5f);
  s.rowSum = sumOfSquaresProgram();
  s.quant.format = fmt;
  s.quant.granularity = g;
  return s;
}

/// The value a reduce sums: x^2 (RMSNorm), or (x - mean)^2 with the mean a
/// row broadcast (LayerNorm's second pass).
EwProgram sumOfSquares(bool centered) {
  EwProgram p;
  if (!centered) {
    p.inputs = {DType::BF16};
    p.instrs = {{EwOp::Convert, {A::input(0)}, DType::F32},
                {EwOp::Mul, {A::result(0), A::result(0)}, DType::F32}};
    p.result = A::result(1);
    return p;
  }
  p.inputs = {DType::F32, DType::F32};
  p.broadcast = {EwBroadcast::None, EwBroadcast::Row};
  p.instrs = {{EwOp::Sub, {A::input(0), A::input(1)}, DType::F32},
              {EwOp::Mul, {A::result(0), A::result(0)}, DType::F32}};
  p.result = A::result(1);
  return p;
}

ElementwiseSpec quantize(EwProgram p, Granularity g, DType fmt,
                         ScalingMode mode = ScalingMode::Current) {
  ElementwiseSpec s;
  s.kind = AuxKind::Quantize;
  s.program = std::move(p);
  s.quant.format = fmt;
  s.quant.granularity = g;
  s.quant.mode = mode;
  if (mode == ScalingMode::Delayed) {
    s.quant.delayed.historyLength = 3;
    s.quant.delayed.margin = 1;
  }
  return s;
}

std::vector<ElementwiseSpec> specs() {
  std::vector<ElementwiseSpec> out;
  const EwProgram bf16 = EwProgram::identity(DType::BF16);
  // The row path.
  out.push_back(quantize(bf16, Granularity::block(1, 128), DType::E4M3FN));
  out.push_back(quantize(EwProgram::identity(DType::F32), Granularity::perRow(),
                         DType::E5M2));
  out.push_back(quantize(bf16, Granularity::mx(), DType::E4M3FN));
  out.push_back(quantize(swigluProgram(),
                         Granularity::block(1, 128, ScaleFormat::F32Pow2),
                         DType::E4M3FN));
  // The column path (R x 1 blocks: the weight gradients' activations).
  out.push_back(quantize(bf16, Granularity::block(128, 1), DType::E4M3FN));
  out.push_back(quantize(swigluProgram(),
                         Granularity::block(16, 1, ScaleFormat::F32Pow2),
                         DType::E5M2));
  // Blocks taller than 256 rows: a thread per column, evaluated twice.
  out.push_back(quantize(bf16, Granularity::block(300, 1), DType::E4M3FN));
  // The tile path (a CTA per block, read twice): 128x128 (the weights),
  // 8x32, 64x256, 200x64.
  out.push_back(quantize(EwProgram::identity(DType::F32),
                         Granularity::block(8, 32), DType::E5M2));
  out.push_back(quantize(bf16, Granularity::block(128, 128), DType::E4M3FN));
  out.push_back(quantize(bf16, Granularity::block(128, 128, ScaleFormat::UE8M0),
                         DType::E4M3FN));
  out.push_back(quantize(bf16, Granularity::block(64, 256), DType::E4M3FN));
  out.push_back(quantize(bf16, Granularity::block(200, 64), DType::E4M3FN));
  // The block path: warp-uniform (16x384), CTA-uniform (4x512) and
  // per-thread blocks (32x2, 37x5, per column); the per-tensor walk.
  out.push_back(
      quantize(swigluProgram(), Granularity::block(32, 2), DType::E4M3FN));
  out.push_back(quantize(bf16, Granularity::block(16, 384), DType::E4M3FN));
  out.push_back(quantize(bf16, Granularity::block(4, 512), DType::E5M2));
  out.push_back(quantize(EwProgram::identity(DType::F16),
                         Granularity::perTensor(), DType::E5M2));
  out.push_back(
      quantize(test::everyOp(), Granularity::perColumn(), DType::E4M3FN));
  out.push_back(quantize(bf16, Granularity::block(37, 5), DType::E5M2));
  // Delayed scaling: the codes written with the history's scale, rewritten
  // on the first step and on a non-finite one.
  out.push_back(quantize(swigluProgram(), Granularity::perTensor(),
                         DType::E4M3FN, ScalingMode::Delayed));
  // A history longer than a CTA (1000 values, not a power of two), which
  // each CTA of the amax pass and the scales kernel reduce together.
  {
    ElementwiseSpec s = quantize(bf16, Granularity::perTensor(), DType::E4M3FN,
                                 ScalingMode::Delayed);
    s.quant.delayed.historyLength = 1000;
    out.push_back(s);
  }
  // Per-tensor current scaling of a program with a table (its amax and
  // codes kernels fill it).
  out.push_back(
      quantize(swigluProgram(), Granularity::perTensor(), DType::E4M3FN));
  // Per-tensor current scaling from a given amax (a GEMM epilogue's): the
  // codes pass alone; f32 and UE8M0 scales.
  for (ScaleFormat f : {ScaleFormat::F32, ScaleFormat::UE8M0}) {
    Granularity g = Granularity::perTensor();
    g.scale = f;
    ElementwiseSpec s = quantize(bf16, g, DType::E4M3FN);
    s.amaxIn = true;
    out.push_back(s);
  }
  // The column path writing its codes and scales transposed (the FP8
  // transpose fused in): through the vector path's tile (16-byte stores
  // where the rows allow, bytes else; 8x1 blocks start rows off 16), the
  // lane-per-column path, and blocks taller than 256 rows.
  for (auto [p, g, f] :
       {std::tuple<EwProgram, Granularity, DType>{
            bf16, Granularity::block(128, 1), DType::E4M3FN},
        {swigluProgram(), Granularity::block(16, 1, ScaleFormat::F32Pow2),
         DType::E5M2},
        {bf16, Granularity::block(8, 1), DType::E4M3FN},
        {bf16, Granularity::block(300, 1), DType::E4M3FN}}) {
    ElementwiseSpec s = quantize(p, g, f);
    s.transposed = true;
    out.push_back(s);
  }
  // Elementwise and transpose.
  // (A bf16 GELU: a table of the whole program, EmulatedTableTest.)
  for (auto [p, t] :
       {std::pair<EwProgram, DType>{test::geluTanh(DType::F32), DType::F32},
        {test::geluTanh(DType::BF16), DType::BF16},
        {swigluProgram(), DType::BF16},
        {test::everyOp(), DType::F16}}) {
    ElementwiseSpec s;
    s.kind = AuxKind::Elementwise;
    s.program = p;
    s.out = t;
    out.push_back(s);
  }
  for (Granularity g : {Granularity::block(128, 128), Granularity::mx()}) {
    ElementwiseSpec s;
    s.kind = AuxKind::Transpose;
    s.quant.granularity = g;
    out.push_back(s);
  }
  // Row sums (a norm's statistics) and programs reading broadcast inputs:
  // the row path, the per-tensor walk (vectors crossing rows when the row
  // length is not a multiple of 8) and an elementwise step.
  for (bool centered : {false, true}) {
    ElementwiseSpec s;
    s.kind = AuxKind::Reduce;
    s.program = sumOfSquares(centered);
    s.out = DType::F32;
    out.push_back(s);
  }
  out.push_back(quantize(rmsnorm(), Granularity::block(1, 128), DType::E4M3FN));
  out.push_back(quantize(rmsnorm(), Granularity::perTensor(), DType::E4M3FN));
  // ... and with its sums (one pass): 1x128 blocks, MX (1x32, UE8M0), 1x8
  // (a block narrower than a thread's chunks are many), whole rows.
  out.push_back(rmsnormWithSum(Granularity::block(1, 128), DType::E4M3FN));
  out.push_back(rmsnormWithSum(Granularity::mx(), DType::E4M3FN));
  out.push_back(rmsnormWithSum(Granularity::block(1, 8), DType::E4M3FN));
  out.push_back(rmsnormWithSum(Granularity::perRow(), DType::E5M2));
  {
    ElementwiseSpec s;
    s.kind = AuxKind::Elementwise;
    s.program = rmsnorm();
    s.out = DType::BF16;
    out.push_back(s);
  }
  // MoE: the permute (routing, gather, row-block quantize) and the
  // unpermute.
  for (auto [t, g, f] :
       {std::tuple<DType, Granularity, DType>{
            DType::BF16, Granularity::block(1, 128), DType::E4M3FN},
        {DType::F32, Granularity::mx(), DType::E5M2}}) {
    ElementwiseSpec s = quantize(EwProgram::identity(t), g, f);
    s.kind = AuxKind::Permute;
    out.push_back(s);
  }
  for (auto [in, o] : {std::pair<DType, DType>{DType::BF16, DType::BF16},
                       {DType::F32, DType::F16}}) {
    ElementwiseSpec s;
    s.kind = AuxKind::Unpermute;
    s.program = EwProgram::identity(in);
    s.out = o;
    out.push_back(s);
  }
  // The interleave of a gate and an up projection's weights.
  for (DType t : {DType::BF16, DType::F32}) {
    ElementwiseSpec s;
    s.kind = AuxKind::Interleave;
    s.program = EwProgram::identity(t);
    s.out = t;
    out.push_back(s);
  }
  return out;
}

/// The GEMMs whose quantizing epilogue EmulatedEpilogueTest runs: N and
/// BLOCK_N (the tile), the result type the values are rounded to, and the
/// epilogue. The other fields are the DeepSeek recipe's; they do not reach
/// the epilogue.
std::vector<KernelSpec> epilogueSpecs() {
  auto spec = [](int64_t n, int blockN, DType out, EwProgram p,
                 int64_t pairBlock, Granularity g, DType fmt) {
    KernelSpec s;
    s.n = n;
    s.k = 256;
    s.a.granularity = Granularity::block(1, 128);
    s.b.granularity = Granularity::block(128, 128);
    s.out = out;
    s.tile.blockN = blockN;
    GemmEpilogue e;
    e.program = std::move(p);
    e.pairBlock = pairBlock;
    e.granularity = g;
    e.format = fmt;
    s.epilogue = e;
    return s;
  };
  return {
      // A feed-forward block's gate and up projection: SwiGLU, 1x128.
      spec(768, 256, DType::BF16, swigluProgram(), 128,
           Granularity::block(1, 128), DType::E4M3FN),
      // Narrower pairs, E5M2, power-of-two scales.
      spec(384, 128, DType::BF16, swigluProgram(), 64,
           Granularity::block(1, 64, ScaleFormat::F32Pow2), DType::E5M2),
      // One input: GELU; a ragged last tile (N = 200).
      spec(200, 128, DType::BF16, test::geluErf(DType::BF16), 0,
           Granularity::block(1, 128), DType::E4M3FN),
      // f32 results (no rounding), the identity, UE8M0 scales of 32.
      spec(160, 128, DType::F32, EwProgram::identity(DType::F32), 0,
           Granularity::block(1, 32, ScaleFormat::UE8M0), DType::E4M3FN),
      // Whole rows in one tile.
      spec(96, 128, DType::BF16, EwProgram::identity(DType::BF16), 0,
           Granularity::perRow(), DType::E4M3FN),
  };
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: fp8-emit-emulated-kernels OUTDIR COUNT EPILOGUES\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::vector<ElementwiseSpec> all = specs();
  const std::vector<KernelSpec> epis = epilogueSpecs();
  if (int(all.size()) != std::atoi(argv[2]) ||
      int(epis.size()) != std::atoi(argv[3])) {
    std::fprintf(stderr,
                 "expected %s specs and %s epilogues "
                 "(test/runtime/emulation/CMakeLists.txt), found %zu and "
                 "%zu\n",
                 argv[2], argv[3], all.size(), epis.size());
    return 1;
  }
  std::ofstream ereg(dir + "/epilogues.inc");
  std::string etable;
  for (size_t i = 0; i < epis.size(); ++i) {
    const KernelSpec &s = epis[i];
    const std::string name = "fp8_epilogue_" + std::to_string(i);
    std::ofstream(dir + "/epilogue" + std::to_string(i) + ".cpp")
        << "// Generated by fp8-emit-emulated-kernels: the quantizing "
           "epilogue of\n// "
        << s.kernelName() << "\n"
        << "#include \"fp8/gemm_quantize.cuh\"\n\nnamespace fp8k {\n\n"
        << emitEpilogueSource(*s.epilogue, s.out, s.tile.blockN)
        << "\n} // namespace fp8k\n\n"
        << "extern \"C\" void " << name
        << "(unsigned char *codes, long long ld, void *scales,\n"
           "    long long ld_scales, void *mirror, int mirror_rows,\n"
           "    int mirror_cols, int cols, const float *res, int row0,\n"
           "    int row_end, int col0, int lane, int warp) {\n"
           "  const fp8k::QuantOut o{codes,  ld,          scales,\n"
           "                         ld_scales, mirror, mirror_rows,\n"
           "                         mirror_cols, cols};\n"
           "  fp8k::quantize_slab<fp8k::Epi, fp8k::EpiProg>(o, res, row0, "
           "row_end,\n"
           "                                               col0, lane, warp);\n"
           "}\n";
    ereg << "extern \"C\" void " << name
         << "(unsigned char *, long long, void *, long long, void *, int, "
            "int, int, const float *, int, int, int, int, int);\n";
    etable += "    {R\"json(" + toJSON(s) + ")json\", &" + name + "},\n";
  }
  ereg << "static const EmulatedEpilogue kEpilogues[] = {\n"
       << etable << "};\n";
  if (!ereg)
    return 1;
  std::ofstream reg(dir + "/registry.inc");
  std::string table;
  for (size_t i = 0; i < all.size(); ++i) {
    auto kernels = emitElementwise(all[i]);
    if (!kernels) {
      std::fprintf(stderr, "%s\n", kernels.message().c_str());
      return 1;
    }
    std::ofstream(dir + "/kernel" + std::to_string(i) + ".cpp")
        << (*kernels)[0].source;
    std::string names, entries;
    for (const GeneratedKernel &k : *kernels) {
      reg << "extern \"C\" void " << k.name << "(const fp8k::EwParams p);\n";
      names += "\"" + k.name + "\", ";
      entries += "&" + k.name + ", ";
    }
    table += "    {R\"json(" + toJSON(all[i]) + ")json\", {" + names + "}, {" +
             entries + "}},\n";
  }
  reg << "static const EmulatedKernel kKernels[] = {\n" << table << "};\n";
  return reg ? 0 : 1;
}
