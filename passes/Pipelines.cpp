//===- Pipelines.cpp - The registered fp8 pipelines -----------------------===//
//
// --fp8-compile{arch=... tuning-db=... sm-count=... m-hint=...
//               fuse-elementwise=... fuse-transpose=... fuse-residual=...
//               amax-from-epilogue=...
//               fuse-epilogue=... fold-constants=...}: the whole lowering
// of an annotated model graph, from linalg matmuls with #fp8.recipe to
// kernel specs, ready for fp8-translate --fp8-to-plan / --fp8-to-cuda.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// Whether --fp8-compile folds residual adds into the matmul before them.
enum class ResidualFold { Auto, On, Off };

struct CompileOptions : public PassPipelineOptions<CompileOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("Target: sm_90a or sm_100a"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> tuningDb{
      *this, "tuning-db",
      llvm::cl::desc("Tuning database (JSON); empty: the heuristic"),
      llvm::cl::init("")};
  Option<int> smCount{
      *this, "sm-count", llvm::cl::desc("SMs of the target GPU"),
      llvm::cl::init(::fp8::targetInfo(::fp8::Arch::SM90a).smCount)};
  Option<int64_t> mHint{
      *this, "m-hint",
      llvm::cl::desc("Rows a dynamic M is configured for; 0: the runtime "
                     "chooses"),
      llvm::cl::init(4096)};
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse elementwise ops into the quantize they feed"),
      llvm::cl::init(true)};
  Option<bool> fuseTranspose{
      *this, "fuse-transpose",
      llvm::cl::desc("Fuse an FP8 transpose into the R x 1 quantize it "
                     "alone reads"),
      llvm::cl::init(true)};
  Option<bool> amaxFromEpilogue{
      *this, "amax-from-epilogue",
      llvm::cl::desc("A per-tensor current-scaling quantize of a GEMM's "
                     "result reads the amax the GEMM's epilogue writes"),
      llvm::cl::init(true)};
  // NOTE: auto folds for sm_90a, whose epilogue loads C by TMA into its
  // staging buffers (the Llama layer's O and down projections on the H200:
  // +0.011 ms each against 0.027 ms add steps; docs/results/
  // h200-2026-12-01-residual-tma/). The sm_100a epilogue reads C element
  // by element, as the sm_90a one did when it cost more than the add step
  // (docs/results/h100-2026-11-25-residual-fold/): auto leaves it alone.
  Option<ResidualFold> fuseResidual{
      *this, "fuse-residual",
      llvm::cl::desc("Fold residual adds into the matmul before them (the "
                     "GEMM accumulates into the residual)"),
      llvm::cl::init(ResidualFold::Auto),
      llvm::cl::values(
          clEnumValN(ResidualFold::Auto, "auto",
                     "for sm_90a (C loaded by TMA), not for sm_100a"),
          clEnumValN(ResidualFold::On, "true", "always"),
          clEnumValN(ResidualFold::Off, "false", "never"))};
  // NOTE: off by default until the fused sm_90a kernels are measured and
  // verified on a GPU: their epilogue's code runs in CI under the CUDA
  // emulator (EmulatedEpilogueTest) and compiles with NVRTC, nothing more.
  Option<bool> fuseEpilogue{
      *this, "fuse-epilogue",
      llvm::cl::desc("Quantize GEMM results in the GEMM's epilogue (gate "
                     "and up projections as one GEMM)"),
      llvm::cl::init(false)};
  Option<bool> foldConstants{
      *this, "fold-constants",
      llvm::cl::desc("Quantize constant weights at compile time"),
      llvm::cl::init(true)};
};

void buildCompilePipeline(OpPassManager &pm, const CompileOptions &o) {
  if (o.fuseResidual == ResidualFold::On ||
      (o.fuseResidual == ResidualFold::Auto && o.arch == "sm_90a"))
    pm.addPass(createFP8FuseResidual());
  pm.addPass(createFP8QuantizeAnnotated({o.foldConstants}));
  // The matmuls' zero inits and duplicate quantizes go away here.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createFP8VerifyTarget({o.arch}));
  // One FP8 transpose per MN-major operand: GEMMs that read the same one
  // (the K-grouped weight gradients of gate and up share the tokens) share
  // the transpose --fp8-verify-target inserted for each.
  pm.addPass(createCSEPass());
  if (o.fuseEpilogue)
    pm.addPass(createFP8FuseEpilogue());
  pm.addPass(createFP8SelectConfig({o.tuningDb, o.smCount, o.mHint}));
  pm.addPass(createFP8OutlineKernels(
      {o.fuseElementwise, o.fuseTranspose, o.amaxFromEpilogue}));
}
} // namespace

void mlir::fp8::registerFP8Pipelines() {
  PassPipelineRegistration<CompileOptions>(
      "fp8-compile",
      "Lowers an FP8-annotated model graph to kernel specs: quantize, verify "
      "for the target, select tiles, outline kernels",
      buildCompilePipeline);
}
