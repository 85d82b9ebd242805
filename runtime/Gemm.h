//===- Gemm.h - The runtime's scaled FP8 GEMM entry point -------*- C++ -*-===//
//
// What a framework calls: give the recipe, the shape and device pointers; the
// runtime checks every argument before anything reaches the GPU, picks a tile
// configuration (tuning DB, else tuned on first use when that is on, else
// the heuristic), generates and JIT-compiles
// the kernel on first use (cached in memory and on disk), builds the TMA
// descriptors and launches on the given stream. A compiled plan's steps call
// it with their kernel spec as it is.
//
//   fp8::GemmRecipe r;                                // DeepSeek-V3 recipe
//   r.a.granularity = fp8::Granularity::block(1, 128);
//   r.b.granularity = fp8::Granularity::block(128, 128);
//   fp8::GemmTensors t{.a = A, .scaleA = SA, .b = B, .scaleB = SB, .d = D};
//   if (fp8::Status s = fp8::gemm(r, M, N, K, t, stream); !s)
//     std::cerr << s.message() << "\n";
//
// Alignment requirements (checked): A and B 16-byte aligned with row pitches
// that are multiples of 16 bytes (so K % 16 == 0 when packed); D 16-byte
// aligned with a 16-byte row pitch when N * sizeof(out) is a multiple of 16
// (the TMA store path), else 4-byte aligned (predicated stores); FP8 codes
// of a quantizing epilogue 8-byte aligned with a row pitch of a multiple of
// 8 bytes.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_GEMM_H
#define FP8_RUNTIME_GEMM_H

#include "codegen/TuningDb.h"
#include "core/KernelSpec.h"
#include "core/Status.h"

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fp8 {

/// The recipe of one GEMM: what `fp8.scaled_matmul` states.
struct GemmRecipe {
  OperandSpec a; ///< A: logically [M, K]
  OperandSpec b; ///< B: logically [N, K] (D = A * B^T)
  /// nullopt: tensor-core accumulation only
  std::optional<int64_t> promotionInterval = 128;
  DType out = DType::BF16;
  bool accumulate = false; ///< D = A * B^T + C
  /// Also write D's amax, the largest magnitude of its values as stored, to
  /// GemmTensors::amaxD (core/KernelSpec.h, KernelSpec::amaxOut): what a
  /// per-tensor quantize of D needs before its first code. Not with a
  /// quantizing epilogue; dense GEMMs on sm_90a.
  bool amaxOut = false;
  /// D quantized in the epilogue (core/KernelSpec.h, GemmEpilogue): D holds
  /// FP8 codes and GemmTensors::scaleD their scales.
  std::optional<GemmEpilogue> epilogue;
};

/// Device pointers and strides (in elements; 0 = packed) of one GEMM. Scale
/// tensors are [ceil(rows/r), ceil(cols/c)] for a (r x c) granularity over the
/// operand as stored, row-major by default (ld_outer = number of columns,
/// ld_k = 1); f32 values, or bytes for UE8M0 scales.
struct GemmTensors {
  const void *a = nullptr;
  int64_t lda = 0;
  const void *scaleA = nullptr;
  int64_t scaleALdOuter = 0, scaleALdK = 0;
  const void *b = nullptr;
  int64_t ldb = 0;
  const void *scaleB = nullptr;
  int64_t scaleBLdOuter = 0, scaleBLdK = 0;
  const void *c = nullptr; ///< required when recipe.accumulate; may equal d
  int64_t ldc = 0;
  void *d = nullptr;
  int64_t ldd = 0;
  /// With a quantizing epilogue: D's scales, [M, ceil(cols / block)] (cols:
  /// the quantized result's, GemmEpilogue::outCols), row pitch scaleDLd
  /// (0: packed); and, if not null, a copy of them with scale (r, c) at
  /// scaleDMirror[r * mirrorStrideRows + c * mirrorStrideCols] (the layout
  /// a next GEMM takes them in by TMA, runtime/plan/PlanScaleMirror.h).
  void *scaleD = nullptr;
  int64_t scaleDLd = 0;
  void *scaleDMirror = nullptr;
  int64_t mirrorStrideRows = 0, mirrorStrideCols = 0;
  /// With GemmRecipe::amaxOut: one f32, 4-byte aligned, which the call sets
  /// to D's amax (zeroed on the stream before the kernel; 0 when M = 0; NaN
  /// when D holds a NaN).
  float *amaxD = nullptr;
};

/// Knobs of one call.
struct GemmOptions {
  /// Use this tile configuration instead of the spec's or the heuristic's.
  std::optional<TileConfig> tile;
  /// The KernelSpec overload, `tile` unset: choose the tile for this M with
  /// the heuristic (what the GemmRecipe overload always does) instead of
  /// launching the spec's.
  bool selectTile = false;
  /// Check with the driver that every buffer is device memory large enough
  /// for the shape (a few microseconds; prevents faults from bad extents).
  bool checkExtents = true;
  /// Launch with programmatic dependent launch: the kernel may be scheduled
  /// while the stream's kernel before it finishes, its setup overlapping
  /// that kernel's tail; it waits in the kernel (fp8k::wait_prior_grid)
  /// before any access to global memory, so the results are those of the
  /// stream's full order. Off, the launch keeps the stream's full order (a
  /// caller's stream may hold kernels of its own before this one: those
  /// are waited for either way).
  bool afterPriorKernel = false;
};

/// What a call did (for tools and benchmarks).
struct GemmReport {
  std::string kernel;
  TileConfig tile;
  int grid = 0;
  int maxActiveClusters = 0; ///< cluster kernels: clusters resident at once
  double jitSeconds =
      0; ///< compile or disk-cache load at the kernel's first use
  /// K-varying scales that travelled with the pipeline stages by TMA (their
  /// layout allowed it); otherwise the kernel's consumers loaded them.
  bool scaleATma = false, scaleBTma = false;
  /// Where the tile came from: "given" (GemmOptions::tile), "spec" (the
  /// spec's own), "tuning database" (FP8_TUNING_DB, setTuningDatabase),
  /// "tuned on first use" (setFirstUseTuner) or "heuristic".
  std::string tileSource;
  /// With FP8_KERNEL_TRACE=1: the kernel's clock stamps (kGemmTrace* below
  /// give the layout; docs/journal/2026-11-22-hopper-kernel.md, 22e, reads
  /// one); empty otherwise.
  std::vector<uint32_t> trace;
};

/// Layout of GemmReport::trace (mirrors KTrace in
/// codegen/kernels/sm90_trace.cuh): [CTA][role][slot], CTAs 0, 1 and grid / 2;
/// roles: consumer warpgroup 0, 1, producer; slot = k-block * kGemmTracePoints
/// + point for the k-blocks kGemmTraceFirst .. + kGemmTraceBlocks - 1 of one
/// work unit. Consumer points: before the stage's barrier wait, after it, after
/// the wgmmas' commit, after they completed, after the promotion; producer:
/// before and after the wait for a free stage. Unwritten slots are 0.
constexpr int kGemmTraceCtas = 3, kGemmTraceRoles = 3, kGemmTraceSlots = 64;
constexpr int kGemmTraceBlocks = 12, kGemmTracePoints = 5, kGemmTraceFirst = 8;

struct CudaDevice;

/// The device as the tuning database records it (codegen/TuningDb.h): name,
/// SMs, clock, the driver's and NVRTC's versions.
TuningDevice tuningDevice(const CudaDevice &dev);

/// Makes `path` the tuning database that tile selection reads ("": none),
/// instead of FP8_TUNING_DB's; reads it now (errors name the file) and
/// forgets the tiles chosen so far. Entries of another generator version
/// are dropped with a message on stderr (TuningDb::staleMessage).
Status setTuningDatabase(const std::string &path);

/// Measures the tile of one GEMM (`spec` at M = m, on the runtime's
/// device) and returns the tuning database entry it makes; nullopt when
/// the GEMM is not one it tunes. runtime/Tuner.h's tuneOnFirstUse installs
/// one that runs fp8-tune's measurement and merges the entry into a file.
using FirstUseTuner = std::function<Expected<std::optional<TuningEntry>>(
    const KernelSpec &spec, int64_t m)>;

/// Tune on first use (a null `tuner` turns it off): a GEMM whose tile is
/// chosen at run time (the GemmRecipe overload, GemmOptions::selectTile, a
/// plan's GEMM steps) and that the tuning database lacks for this GPU,
/// recipe, N, K and M bucket is tuned at its first launch; the entry joins
/// the database in memory and serves every later M of the bucket. The
/// launch that tunes waits for the measurement (seconds: the candidates'
/// compiles and timed runs, the device synchronized); one tuning runs at a
/// time. Not while the launch's stream is being captured into a graph:
/// that launch takes the heuristic's tile, the next uncaptured one tunes.
/// A tuning that fails is reported once on stderr and the problem keeps
/// the heuristic's tile. The tuner runs under the tuning lock: its own
/// launches give their tiles (GemmOptions::tile), as tuneGemm's do.
void setFirstUseTuner(FirstUseTuner tuner);

/// Whether a first-use tuner is set (a lock-free read).
bool tuningOnFirstUse();

/// The tuning database's tile for `spec` at M = m on the runtime's device:
/// an entry of this GPU with the same recipe, N, K and M bucket that the
/// generator accepts; nullopt when there is none (or no database). With a
/// first-use tuner set, a missing entry is tuned now (for a launch on
/// `stream`; `deferred`, if given, is set when that stream is being
/// captured and the tuning waits for a later call). A plan step's
/// compiled-in tile gives way to it (runtime/plan/PlanExecutor.cpp).
Expected<std::optional<TileConfig>> tuningDbTile(const KernelSpec &spec,
                                                 int64_t m,
                                                 CUstream stream = nullptr,
                                                 bool *deferred = nullptr);

/// What tuningDbTile gives `spec` at M = m on `device`, looked up only: a
/// tile chosen earlier in this process (tuned on first use, or the
/// database's), else the database's entry for that GPU (not remembered);
/// never tunes, needs no GPU. nullopt: the caller's own tile stands.
/// compilePlanKernels compiles a plan step's GEMM with it, so that the kernel
/// it lists is the one launched.
Expected<std::optional<TileConfig>>
knownTuningTile(const KernelSpec &spec, int64_t m, const TuningDevice &device);

/// The kernel spec the runtime would launch for this problem (its tile from
/// `tile` if given, else the tuning database's entry for this GPU, N, K and
/// M bucket, else the heuristic for `smCount` SMs).
Expected<KernelSpec> gemmKernelSpec(const GemmRecipe &recipe, int64_t m,
                                    int64_t n, int64_t k, int smCount,
                                    const std::optional<TileConfig> &tile);

/// The spec gemm(spec, m, ...) launches on a GPU of `smCount` SMs: M set,
/// the tile from `options` (`tile`, else the spec's own, or with
/// `selectTile` the tuning database's or the heuristic's for this M, as
/// gemmKernelSpec), checked (checkGemmSpec). Without a GPU the database's
/// entries of any GPU count.
Expected<KernelSpec> gemmLaunchSpec(const KernelSpec &spec, int64_t m,
                                    int smCount,
                                    const GemmOptions &options = {});
/// The same for a launch on `dev` and `stream`, as gemm(spec, m, ...)
/// chooses: the database's entries of this GPU, and with `selectTile` a
/// problem it lacks tuned first when tuning on first use is on.
/// `source`, if given, receives where the tile came from
/// (GemmReport::tileSource).
Expected<KernelSpec> gemmLaunchSpec(const KernelSpec &spec, int64_t m,
                                    const CudaDevice &dev, CUstream stream,
                                    const GemmOptions &options,
                                    const char **source = nullptr);

/// Checks the arguments without touching the GPU (shape, recipe, pointers,
/// alignment, strides). gemm() runs it first.
Status checkGemmArgs(const GemmRecipe &recipe, int64_t m, int64_t n, int64_t k,
                     const GemmTensors &t);

/// D = A * B^T (+ C) with the recipe's scaling, on `stream`: the GEMM of
/// the spec the recipe and the shape make, its tile chosen for M. M = 0
/// launches nothing, and A, D, C and A's scales may then be null.
Status gemm(const GemmRecipe &recipe, int64_t m, int64_t n, int64_t k,
            const GemmTensors &t, CUstream stream,
            const GemmOptions &options = {}, GemmReport *report = nullptr);

/// The GEMM a kernel spec describes (a plan step's, as the compiler wrote
/// it: recipe, N, K and tile) at M = m, on `stream`. The spec's own M is
/// not used (a dynamic M is the plan's norm). Refuses a spec for another
/// target than sm_90a.
Status gemm(const KernelSpec &spec, int64_t m, const GemmTensors &t,
            CUstream stream, const GemmOptions &options = {},
            GemmReport *report = nullptr);

} // namespace fp8

#endif // FP8_RUNTIME_GEMM_H
