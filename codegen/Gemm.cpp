//===- Gemm.cpp - The GEMM generators, by architecture --------------------===//

#include "codegen/Gemm.h"
#include "codegen/Sm100Gemm.h"
#include "codegen/Sm90Gemm.h"
#include "codegen/Sm90Heuristics.h"

namespace fp8 {

Status checkGemmSpec(const KernelSpec &spec) {
  // The field ranges first: the arch checks compute with the tile.
  FP8_RETURN_IF_ERROR(checkKernelSpec(spec));
  switch (spec.arch) {
  case Arch::SM90a:
    return checkSm90Spec(spec);
  case Arch::SM100a:
    return checkSm100Spec(spec);
  }
  return errorf("unknown arch");
}

Status checkTargetRecipe(const KernelSpec &spec) {
  switch (spec.arch) {
  case Arch::SM90a:
    return checkSm90Recipe(spec);
  case Arch::SM100a:
    return checkSm100Recipe(spec);
  }
  return errorf("unknown arch");
}

Expected<GeneratedKernel> emitGemm(const KernelSpec &spec) {
  switch (spec.arch) {
  case Arch::SM90a:
    return emitSm90Gemm(spec);
  case Arch::SM100a:
    return emitSm100Gemm(spec);
  }
  return errorf("unknown arch");
}

ConfigChoice selectConfig(const KernelSpec &spec, int smCount) {
  if (spec.arch == Arch::SM90a)
    return selectSm90Config(spec, smCount);
  return selectSm100Config(spec, smCount);
}

} // namespace fp8
