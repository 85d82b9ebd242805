//===- EmulatedKernels.h - The emulated kernels' registry and runner -----===//
//
// What the emulated-kernel tests share: the registry of the generated
// kernels compiled against the CUDA emulator (EmitKernels.cpp writes it),
// their random inputs, and a step run as the GPU executor runs it.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TEST_RUNTIME_EMULATION_EMULATEDKERNELS_H
#define FP8_TEST_RUNTIME_EMULATION_EMULATEDKERNELS_H

#include "codegen/Elementwise.h"
#include "codegen/kernels/elementwise_params.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanOracle.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace fp8::emulated {

/// One spec's kernels: its JSON, its entry points' names and functions.
struct EmulatedKernel {
  const char *spec;
  std::vector<std::string> names;
  std::vector<void (*)(const fp8k::EwParams)> entries;
};

/// The registry: EmitKernels.cpp's specs, in order.
const std::vector<EmulatedKernel> &kernels();

/// The registry's kernels whose spec satisfies `pred`, and those of the
/// given kinds.
std::vector<size_t>
kernelsWhere(const std::function<bool(const ElementwiseSpec &)> &pred);
std::vector<size_t> kernelsOf(std::initializer_list<AuxKind> kinds);

/// The name of registry kernel i's spec (for test names).
std::string kernelName(size_t i);

/// Random values of every kind the kernels must get right: normal values
/// with outliers, zeros, negative zeros, tiny values, and a zero block.
HostTensor randomTensor(DType t, const Shape &shape, uint64_t seed);

/// Runs the step's kernels as the executor launches them
/// (runtime/plan/PlanKernels.h: the same entry points, grids and parameter),
/// on a 1-SM "GPU" so that the grid-stride loops wrap.
void runEmulated(const EmulatedKernel &k, const PlanStep &step,
                 HostBuffers &buffers, std::vector<uint32_t> &amax,
                 void *mirror = nullptr, int64_t mirrorStrideRows = 0,
                 int64_t mirrorStrideCols = 0);

/// runEmulated with every buffer one element of its type past a 16-byte
/// boundary (as a tensor at an odd offset in its allocation is): the paths
/// for tensors that 16-byte accesses cannot take.
void runEmulatedMisaligned(const EmulatedKernel &k, const PlanStep &step,
                           HostBuffers &buffers, std::vector<uint32_t> &amax);

/// Expects `got` to hold `want`'s bits, naming the first difference.
void expectSameBits(const HostTensor &got, const HostTensor &want,
                    const std::string &what);

} // namespace fp8::emulated

#endif // FP8_TEST_RUNTIME_EMULATION_EMULATEDKERNELS_H
