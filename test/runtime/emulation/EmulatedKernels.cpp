//===- EmulatedKernels.cpp - The emulated kernels' registry and runner ---===//

#include "test/runtime/emulation/EmulatedKernels.h"

#include "numerics/Random.h"
#include "runtime/plan/PlanKernels.h"
#include "test/runtime/emulation/CudaEmulatorRuntime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>

namespace fp8::emulated {
namespace {
#include "registry.inc"
} // namespace

const std::vector<EmulatedKernel> &kernels() {
  static const std::vector<EmulatedKernel> all(std::begin(kKernels),
                                               std::end(kKernels));
  return all;
}

std::vector<size_t>
kernelsWhere(const std::function<bool(const ElementwiseSpec &)> &pred) {
  std::vector<size_t> out;
  for (size_t i = 0; i < kernels().size(); ++i) {
    auto spec = elementwiseSpecFromJSON(kernels()[i].spec);
    if (spec.isOk() && pred(*spec))
      out.push_back(i);
  }
  return out;
}

std::vector<size_t> kernelsOf(std::initializer_list<AuxKind> kinds) {
  return kernelsWhere([&](const ElementwiseSpec &s) {
    return std::find(kinds.begin(), kinds.end(), s.kind) != kinds.end();
  });
}

std::string kernelName(size_t i) {
  auto spec = elementwiseSpecFromJSON(kernels().at(i).spec);
  return spec.isOk() ? spec->kernelName() : "invalid_spec";
}

HostTensor randomTensor(DType t, const Shape &shape, uint64_t seed) {
  HostTensor h = HostTensor::zeros(t, shape);
  numerics::RandomSpec spec;
  spec.dist = numerics::Distribution::Outliers;
  spec.seed = seed;
  std::vector<float> v = numerics::randomTensor(h.elements(), spec);
  for (int64_t i = 0; i < h.elements(); ++i) {
    float x = v[size_t(i)];
    if (i % 13 == 0)
      x = 0.0f;
    if (i % 17 == 3)
      x = -0.0f;
    if (i % 11 == 5)
      x *= 1e-5f;
    if (i < 40)
      x = 0.0f;
    h.set(i, x);
  }
  return h;
}

namespace {

/// runEmulated's launches, the buffers at `address`.
void launchStep(const EmulatedKernel &k, const PlanStep &step,
                const HostBuffers &buffers,
                const std::function<void *(const std::string &)> &address,
                std::vector<uint32_t> &amax, void *mirror,
                int64_t mirrorStrideRows, int64_t mirrorStrideCols) {
  StepShapes shapes;
  for (const auto &[name, t] : buffers)
    shapes[name] = t.shape;
  // The whole scratch of the step (its amaxes and pass 1's count of CTAs),
  // zero past what the caller gave.
  amax.resize(std::max(amax.size(), size_t(auxScratchBytes(step, shapes) / 4)),
              0);
  const fp8k::EwParams p =
      auxStepParams(step, shapes, address, amax.data(), mirror,
                    mirrorStrideRows, mirrorStrideCols);
  const std::vector<ElementwiseEntryLaunch> launches =
      auxStepLaunches(step, shapes, /*smCount=*/1, p);
  ASSERT_FALSE(launches.empty()); // (the row-sum quantize: one of two)
  for (const ElementwiseEntryLaunch &l : launches)
    ASSERT_EQ(l.kernel, k.names.at(l.entry));
  for (const ElementwiseEntryLaunch &l : launches)
    cudaemu::launch({l.launch.grid[0], l.launch.grid[1], l.launch.grid[2]},
                    {l.launch.block[0], l.launch.block[1], l.launch.block[2]},
                    [&] { k.entries[l.entry](p); });
}

} // namespace

void runEmulated(const EmulatedKernel &k, const PlanStep &step,
                 HostBuffers &buffers, std::vector<uint32_t> &amax,
                 void *mirror, int64_t mirrorStrideRows,
                 int64_t mirrorStrideCols) {
  launchStep(
      k, step, buffers,
      [&](const std::string &name) -> void * {
        return buffers.at(name).data.data();
      },
      amax, mirror, mirrorStrideRows, mirrorStrideCols);
}

void runEmulatedMisaligned(const EmulatedKernel &k, const PlanStep &step,
                           HostBuffers &buffers, std::vector<uint32_t> &amax) {
  // Each buffer one element (of its type) past a 16-byte boundary.
  std::map<std::string, std::vector<uint8_t>> moved;
  std::map<std::string, size_t> offset;
  for (const auto &[name, t] : buffers) {
    const size_t es = size_t(bytesOf(t.dtype, 1));
    std::vector<uint8_t> &m = moved[name];
    m.assign(t.data.size() + 32, 0);
    const size_t base = (16 - reinterpret_cast<uintptr_t>(m.data()) % 16) % 16;
    offset[name] = base + es;
    std::copy(t.data.begin(), t.data.end(), m.begin() + ptrdiff_t(base + es));
  }
  launchStep(
      k, step, buffers,
      [&](const std::string &name) -> void * {
        return moved.at(name).data() + offset.at(name);
      },
      amax, nullptr, 0, 0);
  for (auto &[name, t] : buffers) {
    const auto from = moved.at(name).begin() + ptrdiff_t(offset.at(name));
    std::copy(from, from + ptrdiff_t(t.data.size()), t.data.begin());
  }
}

void expectSameBits(const HostTensor &got, const HostTensor &want,
                    const std::string &what) {
  const TensorComparison c = compareBits(got, want);
  EXPECT_EQ(c.mismatches, 0)
      << what << ": first difference at element " << c.firstMismatch
      << ": emulated " << (c.firstMismatch >= 0 ? got.get(c.firstMismatch) : 0)
      << ", oracle " << (c.firstMismatch >= 0 ? want.get(c.firstMismatch) : 0);
}

} // namespace fp8::emulated
