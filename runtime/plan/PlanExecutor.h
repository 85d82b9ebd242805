//===- PlanExecutor.h - A plan on the GPU -----------------------*- C++ -*-===//
//
// Runs a plan's steps on the GPU: every buffer allocated once, every kernel
// JIT-compiled through the runtime's cache (NVRTC, memory + disk), the GEMM
// steps launched through fp8::gemm (runtime/Gemm.h), the quantize,
// transpose and elementwise steps through the kernels of
// codegen/Elementwise.h. Compiling needs no GPU (compilePlanKernels);
// everything else does.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLANEXECUTOR_H
#define FP8_RUNTIME_PLANEXECUTOR_H

#include "codegen/Elementwise.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffer.h"
#include "runtime/Gemm.h"
#include "runtime/KernelCache.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanOracle.h"
#include "runtime/plan/PlanScaleMirror.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fp8 {

/// One kernel compiled for a plan.
struct CompiledPlanKernel {
  std::string step; ///< the step that launches it
  std::string name; ///< the kernel (for GEMMs: the spec's kernel name)
  /// "tuning database" when a GEMM step's compiled-in tile gave way to the
  /// database's entry for the GPU; else empty (the plan's tile).
  std::string tileSource;
  /// A GEMM step's tile, as launched.
  std::optional<TileConfig> tile;
  /// A GEMM step launching the plan's compiled-in heuristic tile (chosen
  /// for the plan's m-hint, or another SM count) where the runtime's
  /// heuristic picks another for this run's M: that tile (what a plan
  /// compiled with m-hint=0 launches); else none.
  std::optional<TileConfig> heuristicTile;
  CubinOrigin origin = CubinOrigin::Compiled;
  double seconds = 0; ///< compile or disk-cache load
  size_t cubinBytes = 0;
  int registers = -1, spillBytes = -1;
};

/// JIT-compiles (or finds in the cache) every kernel of the plan's steps
/// for its arch, without a GPU. GEMM steps whose tile the runtime chooses
/// get the heuristic's tile for M = dims' value on `smCount` SMs. With
/// `device` (the GPU the plan will run on), a GEMM step with a compiled-in
/// tile gets the tuning database's tile for that GPU where it has one
/// (knownTuningTile), as GpuPlan launches it.
Expected<std::vector<CompiledPlanKernel>>
compilePlanKernels(const Plan &plan, const ResolvedPlan &shapes, int smCount,
                   const TuningDevice *device = nullptr);

/// Memory a GpuPlan uses but does not own (runtime/plan/PlanBinding.h: a
/// plan bound to the caller's tensors).
struct GpuPlanMemory {
  /// Buffers left unallocated, at these addresses (0: bound later with
  /// GpuPlan::rebind, before the first launch that reads or writes them).
  std::map<std::string, CUdeviceptr> buffers;
  /// Scale mirrors left unallocated, by the step that writes them
  /// (ScaleMirror::writer).
  std::map<size_t, CUdeviceptr> mirrors;
};

/// A plan resident on the GPU.
class GpuPlan {
public:
  /// Allocates every buffer on the runtime's device (FP8_DEVICE) but those
  /// of `external`, checks that it can run the plan's arch and that the
  /// buffers fit.
  static Expected<std::unique_ptr<GpuPlan>>
  create(const Plan &plan, const ResolvedPlan &shapes,
         const GpuPlanMemory &external = {});
  ~GpuPlan();

  /// Copies the inputs, weights and constants of `host` to the device and
  /// zeroes the states and scratch (delayed scaling starts over). External
  /// buffers are left as they are. An input or weight missing from `host`
  /// is an error, or with `zeroMissing` zeroed (a plan whose inputs are
  /// copied in later).
  Status upload(const HostBuffers &host, bool zeroMissing = false);
  /// Points external buffer `name` at `ptr` (the caller's memory, at least
  /// the buffer's bytes).
  Status rebind(const std::string &name, CUdeviceptr ptr);
  /// Enqueues every later launch on `stream` (null: the plan's own stream).
  void setStream(CUstream stream) { stream_ = stream ? stream : ownStream_; }
  /// Whether fp8::gemm checks each operand's extent with the driver (the
  /// default; microseconds of host time per GEMM): off where the caller
  /// has checked the buffers' sizes itself.
  void setCheckExtents(bool check) { checkExtents_ = check; }
  /// Whether a step of at most kOverlapMaxRows rows (a decode step's) may
  /// start while the stream's kernel before it finishes (programmatic
  /// dependent launch; on by default): every kernel a plan launches waits
  /// in the kernel before it touches global memory, so only launch latency
  /// and setup overlap, never the steps' memory. Off, or for larger steps,
  /// a step's first kernel keeps the stream's full order (fp8-run
  /// --serial-steps turns it off, to compare).
  void setOverlapSteps(bool overlap) { overlapSteps_ = overlap; }
  /// The most rows (M; batch * rows of a non-GEMM step) of a step that
  /// overlaps the one before (overlapsPriorStep has the measurements).
  static constexpr int64_t kOverlapMaxRows = 128;
  /// Copies buffer `name` to `out` (shaped and typed as the plan says).
  Status download(const std::string &name, HostTensor &out) const;

  /// Enqueues step `index` on the plan's stream.
  Status launch(size_t index);
  /// Runs every step of `phase` in order. With `checkEachStep` the stream is
  /// drained after every step, so a fault or a hang (more than `timeout`
  /// seconds) is reported with the step's name.
  Status run(Phase phase, bool checkEachStep, double timeoutSeconds = 60);
  /// Waits for the stream (a hang is reported after `timeoutSeconds`).
  Status sync(double timeoutSeconds, const std::string &what);

  /// Times the run phase: `iters` iterations after `warmup`, CUDA events
  /// around every step, every iteration queued before the stream is
  /// drained (the host's launches ahead of the GPU). Returns per-step times
  /// (ms), [iteration][step] over the run steps, and the whole iteration's
  /// as the last column.
  Expected<std::vector<std::vector<double>>> timeRun(int warmup, int iters);

  /// The run phase as one CUDA graph (runtime/plan/PlanGraph.cpp): captured
  /// once from the plan's launches, after a first run has loaded every
  /// kernel and chosen every tile; a GpuPlan holds one set of dims, so one
  /// graph serves every later run. Then each run is one launch.
  Status captureRun();
  /// Launches the captured graph on the plan's stream (captureRun first).
  Status launchGraph();
  /// The times (ms) of `iters` graph launches after `warmup`, every launch
  /// queued before the stream is drained.
  Expected<std::vector<double>> timeGraph(int warmup, int iters);

  CUstream stream() const { return stream_; }
  const CudaDevice &device() const { return *device_; }
  /// The device address of buffer `name` (0 when unknown).
  CUdeviceptr address(const std::string &name) const;
  /// The device address of the scale mirror step `writer` writes (0 for
  /// none).
  CUdeviceptr mirrorAddress(size_t writer) const;
  /// Total bytes allocated for the plan.
  size_t deviceBytes() const { return deviceBytes_; }
  /// The GEMM kernel fp8::gemm launched for step `index` (after a launch).
  const std::string &gemmKernel(size_t index) const;
  /// Whether that GEMM took its A scales by TMA (GemmReport::scaleATma).
  bool gemmScaleATma(size_t index) const;
  /// Whether that GEMM took its B scales by TMA (GemmReport::scaleBTma).
  bool gemmScaleBTma(size_t index) const;
  /// The scales mirrored in the GEMM's TMA layout
  /// (runtime/plan/PlanScaleMirror.h).
  const ScaleMirrorPlan &scaleMirrors() const { return mirrors_; }

private:
  GpuPlan(const Plan &plan, const ResolvedPlan &shapes);
  Status launchAux(const PlanStep &s, size_t index);
  Status launchGemm(const PlanStep &s, size_t index);
  Status launchGroupedGemm(const PlanStep &s, size_t index);
  /// A GEMM step's options at M = m (fp8::gemm's or fp8::groupedGemm's)
  /// for its launch spec `spec`: its tile choice (the tuning database's for
  /// this GPU over the plan's, tuningDbTile), the extent checks.
  Expected<GemmOptions> gemmOptions(const PlanStep &s, const KernelSpec &spec,
                                    size_t index, int64_t m);
  /// Whether a step of `rows` rows overlaps the one before
  /// (setOverlapSteps).
  bool overlapsPriorStep(int64_t rows) const;
  /// What fp8::gemm or fp8::groupedGemm reported for step `index`.
  void recordGemm(size_t index, const GemmReport &rep);
  /// Where a GEMM reads scales from when not from its input (a mirror, or
  /// the scales before a transpose: PlanScaleMirror.h), or 0.
  CUdeviceptr scaleSourceAddress(const ScaleSource &src) const;

  const Plan &plan_;
  const ResolvedPlan &shapes_;
  const CudaDevice *device_ = nullptr;
  CUstream ownStream_ = nullptr; ///< created and destroyed with the plan
  CUstream stream_ = nullptr;    ///< where launches go
  std::map<std::string, DeviceBuffer> buffers_;
  std::map<std::string, CUdeviceptr> external_;
  std::vector<DeviceBuffer> auxScratch_; ///< per step (auxScratchBytes)
  ScaleMirrorPlan mirrors_;
  std::vector<DeviceBuffer> mirrorScratch_; ///< owned mirrors, zeroed once
  std::vector<CUdeviceptr> mirrorAddress_;  ///< per mirror, owned or not
  /// Per step and tensor alignment (auxParamsAligned: [0] unaligned, [1]
  /// aligned): its elementwise launches (names, grids), made at its first
  /// launch with that alignment; a GpuPlan's shapes never change.
  std::vector<std::array<std::vector<ElementwiseEntryLaunch>, 2>> auxLaunches_;
  /// Per step: the tuning database's tile, looked up at its first launch.
  std::vector<std::optional<std::optional<TileConfig>>> dbTiles_;
  std::vector<std::string> gemmKernels_;
  std::vector<char> gemmScaleATma_, gemmScaleBTma_;
  size_t deviceBytes_ = 0;
  bool checkExtents_ = true;    ///< fp8::gemm checks buffer extents
  bool overlapSteps_ = true;    ///< setOverlapSteps
  CUgraphExec graph_ = nullptr; ///< the run phase, once captured
};

} // namespace fp8

#endif // FP8_RUNTIME_PLANEXECUTOR_H
