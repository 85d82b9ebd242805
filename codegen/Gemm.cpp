//===- Gemm.cpp - The GEMM generators, by architecture --------------------===//

#include "codegen/Gemm.h"
#include "codegen/Sm90Gemm.h"

namespace fp8 {

Status checkGemmSpec(const KernelSpec &spec) {
  switch (spec.arch) {
  case Arch::SM90a:
    return checkSm90Spec(spec);
  case Arch::SM100a:
    return errorf("the sm_100a GEMM generator is not available in this build");
  }
  return errorf("unknown arch");
}

Expected<GeneratedKernel> emitGemm(const KernelSpec &spec) {
  switch (spec.arch) {
  case Arch::SM90a:
    return emitSm90Gemm(spec);
  case Arch::SM100a:
    return checkGemmSpec(spec);
  }
  return errorf("unknown arch");
}

ConfigChoice selectConfig(const KernelSpec &spec, int smCount) {
  if (spec.arch == Arch::SM90a)
    return selectSm90Config(spec, smCount);
  ConfigChoice c;
  c.reason = "no heuristic for " + std::string(toString(spec.arch));
  return c;
}

} // namespace fp8
