//===- GeneratedKernel.h - Emitted CUDA source + launch metadata ----------===//
//
// What every emitter returns: the CUDA C++ translation unit, the kernel's
// entry name, the NVRTC target, and everything the launcher needs to know
// (block, cluster, shared memory, which TMA descriptors to build and how).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_GENERATEDKERNEL_H
#define FP8_CODEGEN_GENERATEDKERNEL_H

#include "core/KernelSpec.h"

#include <string>
#include <utility>
#include <vector>

namespace fp8 {

/// How the launcher must encode one TMA descriptor (cuTensorMapEncodeTiled).
struct TmaPlan {
  /// ScaleA/ScaleB: the packed UE8M0 scales of the sm_100a kernels
  /// (codegen/Sm100ScaleLayout.h), viewed as [bytes / 16, 16] bytes.
  enum class Operand : uint8_t { A, B, D, ScaleA, ScaleB, C };
  Operand operand = Operand::A;
  int elemBytes = 1;      ///< 1 (FP8), 2 (BF16), 4 (F32)
  int boxInner = 128;     ///< elements along the contiguous dimension
  int boxOuter = 128;     ///< rows
  int swizzleBytes = 128; ///< 0 (none), 32, 64 or 128
};

/// Launch metadata of a generated kernel.
struct LaunchInfo {
  int threads = 0;     ///< threads per CTA
  int sharedBytes = 0; ///< dynamic shared memory (incl. alignment slack)
  int clusterX = 1;    ///< CTAs per cluster (along grid x)
  int clusterM = 1, clusterN = 1; ///< how the cluster's CTAs pair tiles
  bool persistent = true;         ///< grid = min(units, SMs)
  int blockM = 0, blockN = 0;
  int splitK = 1;
  int tailSplit = 1;    ///< TileConfig::tailSplit (the most K slices of a tail)
  int kSlices = 1;      ///< K slices a tile can have (promotion groups of K)
  bool tmaStore = true; ///< D written with TMA (else predicated stores)
  /// A cooperative launch: every CTA resident at once, as a grid-wide wait
  /// inside the kernel needs (elementwise_quantize_tensor.cuh,
  /// grid_amax_scale).
  bool gridSync = false;
  /// sm_90a: the tail-box variant, whose last M tile loads A and its K
  /// scales through two more descriptors after those of `tma` (their boxes
  /// GemmParams::a_box_rows high).
  bool tailBox = false;
  std::vector<TmaPlan> tma; ///< descriptors, in kernel-parameter order
};

/// A generated kernel: source, entry point, target, launch metadata.
struct GeneratedKernel {
  std::string name;   ///< extern "C" entry point
  std::string source; ///< the translation unit
  Arch arch = Arch::SM90a;
  LaunchInfo launch;
};

/// The device headers the generated sources include, as (include name,
/// contents) pairs; NVRTC receives them in memory. Their contents are part
/// of every cache key.
const std::vector<std::pair<std::string, std::string>> &kernelHeaders();

/// A chosen configuration and the model's reasoning, for --explain output.
struct ConfigChoice {
  TileConfig tile;
  double predictedCost = 0; ///< model units (relative)
  std::string reason;
};

} // namespace fp8

#endif // FP8_CODEGEN_GENERATEDKERNEL_H
