//===- Plan.h - A compiled model graph: buffers, steps, kernel specs ------===//
//
// The plan is what `fp8-translate --fp8-to-plan` writes and `fp8-run`
// executes: the buffers of a graph (shapes may name dynamic dimensions), its
// steps in order (quantize, transpose, elementwise, gemm), each with its
// kernel spec, and the graph's unquantized reference (the same graph with
// high-precision matmuls) that --verify compares against. JSON, versioned
// ("format": 1); docs/pipeline.md, "The plan", describes every key. Plain
// C++: fp8-run reads it on the GPU machine, which has no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_RUNTIME_PLAN_H
#define FP8_RUNTIME_PLAN_H

#include "codegen/Elementwise.h"
#include "core/KernelSpec.h"
#include "core/RecipeRules.h"
#include "core/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fp8 {

/// The plan format this build reads and writes.
inline constexpr int kPlanFormat = 1;

/// One dimension of a shape: `value`, or ceil((scale * dim + value) /
/// divisor) of the dynamic dimension `dim` (the rows of an MoE layer's
/// permuted tokens: topK * M plus the routing's padding). JSON: 4096, "M",
/// "ceildiv(M,128)", "8*M+240", "ceildiv(8*M+240,128)".
struct DimExpr {
  int64_t value = 0; ///< the size, or the offset added to scale * dim
  std::string dim;
  int64_t divisor = 1;
  int64_t scale = 1;

  /// The largest scale and offset a plan may state: with a dimension below
  /// kMaxDimSize, scale * dim + value stays far inside int64_t.
  static constexpr int64_t kMaxScale = int64_t(1) << 20;
  static constexpr int64_t kMaxOffset = int64_t(1) << 40;

  static DimExpr constant(int64_t v) { return {v, "", 1, 1}; }
  static DimExpr symbol(std::string name, int64_t divisor = 1,
                        int64_t scale = 1, int64_t offset = 0) {
    return {offset, std::move(name), divisor, scale};
  }
  bool isStatic() const { return dim.empty(); }
  /// True for a plain name (scale 1, no offset, no divisor).
  bool isPlain() const {
    return !isStatic() && divisor == 1 && scale == 1 && value == 0;
  }
  std::string toString() const;
  bool operator==(const DimExpr &o) const {
    return value == o.value && dim == o.dim && divisor == o.divisor &&
           scale == o.scale;
  }
};
using ShapeExpr = std::vector<DimExpr>;

/// What a buffer holds, which decides how fp8-run fills it.
enum class BufferRole : uint8_t {
  Input,    ///< a graph argument: --inputs DIR/<name>.npy or --random
  Weight,   ///< an argument marked fp8.weight: as an input, quantized once
  Constant, ///< data in the plan (base64 in "data")
  State,    ///< persists across runs (delayed scaling's amax history)
  Temp,     ///< written by a step, read by later ones
  Output,   ///< written by a step, a graph result (written as .npy)
};

struct PlanBuffer {
  std::string name;
  DType dtype = DType::F32;
  ShapeExpr shape;
  BufferRole role = BufferRole::Temp;
  /// Constant: the elements, row-major, as stored (bf16 bit patterns, FP8
  /// codes, f32 values little-endian).
  std::vector<uint8_t> data;
  /// State: the amax history length (the buffer is f32 [history + 4]: the
  /// 16-byte fp8k::AmaxHistoryState header, then the values).
  int64_t history = 0;
};

enum class StepKind : uint8_t {
  Quantize,
  Transpose,
  Elementwise,
  Gemm,
  Permute,
  Unpermute,
  Reduce,
  Interleave
};
/// Prepare steps run once (weights: quantize, transpose); run steps every
/// iteration.
enum class Phase : uint8_t { Prepare, Run };

/// One step. Operands by buffer name:
///   quantize     inputs: the program's inputs      outputs: codes, scales
///                state: the amax history (delayed scaling)
///   transpose    inputs: codes, scales             outputs: codes, scales
///   elementwise  inputs: the program's inputs      outputs: values
///   reduce       inputs: the program's inputs      outputs: f32 row sums
///                ([batch, rows] of the [batch, rows, cols] grid)
///   gemm         inputs: a, a_scale, b, b_scale[, c]  outputs: d
///                with a quantizing epilogue (KernelSpec::epilogue):
///                outputs: codes, scales of the quantized result
///                grouped (contiguous): a, a_scale, b, b_scale, offsets
///                grouped (masked): a [G, maxM, K], a_scale, b, b_scale,
///                valid rows [G]
///                grouped (along K): a [M, K], a_scale, b [N, K], b_scale,
///                offsets [G + 1] along K; d [G, M, N]
///   permute      inputs: x [T, H], ids [T, topK] (i32 expert ids)
///                outputs: codes, scales of the permuted rows [R, H],
///                offsets [E + 1], positions [T, topK], source [R] (i32)
///                R = topK * T + E * (align - 1): the rows of every expert
///                in order, each group padded to a multiple of `align`
///   unpermute    inputs: y [R, H], positions [T, topK], weights [T, topK]
///                (f32)   outputs: out [T, H] = sum_j w[t, j] y[pos[t, j]]
///   interleave   inputs: a, b [R, C]   outputs: [2R, C], the rows of a and
///                b in alternating blocks of `block` rows (R a multiple)
struct PlanStep {
  std::string name;
  StepKind kind = StepKind::Quantize;
  Phase phase = Phase::Run;
  std::vector<std::string> inputs, outputs;
  std::string state;
  std::string op;      ///< the MLIR op and location it came from (informative)
  ElementwiseSpec aux; ///< quantize, transpose, elementwise
  KernelSpec gemm;     ///< gemm (m may be dynamic: -1)
  /// gemm: the tile is the runtime heuristic's for the actual M (the plan
  /// was compiled for a dynamic M without an M hint).
  bool runtimeTile = false;
  std::string tileSource; ///< gemm: where the tile came from (informative)
  int64_t batch = 1;      ///< gemm: `batch` GEMMs on stacked operands
  int64_t align = 1;      ///< permute: rows of a group padded to a multiple
  int64_t block = 1;      ///< interleave: rows per block

  /// The kernel name (GEMM: KernelSpec::kernelName()).
  std::string kernelName() const;
};

/// One op of the unquantized reference graph.
/// The MoE ops recompute the routing from the ids themselves (numerics::
/// moePermute), independently of the plan's permute step:
///   permute         inputs: x, ids            out: the permuted rows
///   grouped_matmul  inputs: a, b, ids         out: a_g b_g^T per expert
///                   (b [E, N, K] / [E, K, N]; a the permuted rows); masked:
///                   inputs a [E, maxM, K], b, valid rows [E] (an input),
///                   out [E, maxM, N], rows past a group's count zero;
///                   along K: inputs a [R, M], b [R, N] (rows in expert
///                   order, as stored), offsets [E + 1] (an input), out
///                   [E, M, N] = a_e^T b_e over each expert's rows
///   unpermute       inputs: y, ids, weights   out: the weighted sum
///   reduce          inputs: the program's     out: its f32 row sums
///                   (reduceRow)
struct RefOp {
  enum class Kind : uint8_t {
    Matmul,
    Elementwise,
    Permute,
    GroupedMatmul,
    Unpermute,
    Reduce
  };
  Kind kind = Kind::Matmul;
  /// matmul: a, b[, c] (a [M, K] / [K, M], b [N, K] / [K, N] per layout;
  /// [batch, ...] when batched); elementwise, reduce: the program's
  /// inputs.
  std::vector<std::string> inputs;
  std::string out;
  DType dtype = DType::BF16; ///< the out value's element type
  ShapeExpr shape;
  Layout aLayout = Layout::KMajor, bLayout = Layout::KMajor;
  bool batched = false;
  EwProgram program;
  int64_t experts = 0; ///< MoE ops: E
  int64_t align = 1;   ///< MoE ops: the routing's group padding
  /// grouped_matmul: its form (grouped_contiguous, grouped_masked,
  /// grouped_k).
  GemmKind form = GemmKind::GroupedContiguous;
};

struct Plan {
  int format = kPlanFormat;
  std::string function;
  Arch arch = Arch::SM90a;
  std::vector<std::string> dims; ///< names of the dynamic dimensions
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  std::vector<std::string> outputs; ///< graph results, in return order
  std::vector<RefOp> reference;

  /// The buffer named `name`, or nullptr.
  const PlanBuffer *buffer(const std::string &name) const;
  /// The reference op producing `name`, or nullptr.
  const RefOp *referenceOp(const std::string &name) const;
  /// The indices of the steps of phase `p`, in order (the order they run).
  std::vector<size_t> stepsOf(Phase p) const;
};

/// "input", "weight", ...; "quantize", ...; "prepare", "run"; "matmul", ...
std::string_view toString(BufferRole r);
std::string_view toString(RefOp::Kind k);
std::string_view toString(StepKind k);
std::string_view toString(Phase p);

/// The plan as JSON (2-space indent, keys in a fixed order: stable output
/// that the committed example plans are compared against).
std::string toJSON(const Plan &plan);
/// The largest plan file loadPlan reads: 256 MiB (the committed model plans,
/// constants included, are a few MiB).
inline constexpr int64_t kMaxPlanBytes = int64_t(256) << 20;

/// The largest batch of stacked GEMMs and amax history a plan may state:
/// the kernels take both as 32-bit integers.
inline constexpr int64_t kMaxBatch = (int64_t(1) << 31) - 1;
inline constexpr int64_t kMaxHistory = (int64_t(1) << 31) - 1;
/// The most experts and the largest group padding an MoE step may state
/// (core/RecipeRules.h).
inline constexpr int64_t kMaxExperts = kMaxMoeExperts;
inline constexpr int64_t kMaxAlign = kMaxMoeAlign;

/// The kernel spec kind of a non-GEMM step.
AuxKind auxKindOf(StepKind k);

/// Parses and validates a plan; `where` (a path) names it in errors. Plans
/// of another format are refused with a message naming both versions. The
/// plan is input: every field must have its JSON type (an integer field a
/// JSON integer in its range, never a float, a boolean or a string), and a
/// present optional field of the wrong type is an error.
Expected<Plan> parsePlan(const std::string &text, const std::string &where);
/// Reads and parses a plan file: a regular file (FIFOs, devices such as
/// /dev/zero and directories are refused before anything is read) of at
/// most kMaxPlanBytes.
Expected<Plan> loadPlan(const std::string &path);
/// Checks names, roles, operand counts, element types, every GEMM's kernel
/// spec (checkKernelSpec), the static parts of the shapes of every step,
/// and that a reference value named after a buffer has the buffer's shape
/// and element type (parsePlan runs it).
Status validatePlan(const Plan &plan);

/// Concrete sizes of the dynamic dimensions.
using DimValues = std::map<std::string, int64_t>;

/// "M=4096, N=512" ("none" when empty).
std::string formatDims(const DimValues &dims);

/// Dynamic dimensions are below 2^40 (about 10^12): beyond any tensor a
/// host or a GPU holds, so a larger size is a mistake, refused before any
/// shape is formed (kMaxBufferBytes then decides for whole shapes).
inline constexpr int64_t kMaxDimSize = int64_t(1) << 40;
/// No buffer of a plan holds more than 2^47 bytes (128 TiB): the user
/// address space of x86-64 and of the GPUs' unified addressing, so no
/// allocation of that size can succeed; byte offsets and element counts of
/// every buffer then fit in int64_t with room for the products the oracle
/// and the kernels form from them.
inline constexpr int64_t kMaxBufferBytes = int64_t(1) << 47;

/// The sizes of the plan's dimensions from `given` (NAME=SIZE pairs):
/// every dimension needs one; unknown names, negative sizes and sizes of
/// kMaxDimSize or more are errors.
Expected<DimValues>
resolveDims(const Plan &plan,
            const std::vector<std::pair<std::string, int64_t>> &given);
/// A concrete shape. Negative sizes (static or in `dims`) and dimensions
/// missing from `dims` are errors; ceildiv never overflows.
Expected<Shape> resolveShape(const ShapeExpr &shape, const DimValues &dims);
/// Bytes of `count` elements of `t` (f32 for states). Saturates at
/// INT64_MAX instead of overflowing, so that a limit refuses what does not
/// fit.
int64_t bytesOf(DType t, int64_t count);
/// Elements of a shape, saturating at INT64_MAX like bytesOf (a negative
/// dimension counts as INT64_MAX too). Exact for every shape resolvePlan
/// accepts.
int64_t elementCount(const Shape &s);
/// Checks that a value of `t` shaped `s` holds at most kMaxBufferBytes,
/// its empty dimensions counted as 1 (so that no loop over the others
/// runs 2^32 x 2^32 times); the error names `what` ("buffer 'x'"), the
/// type, the shape and the size.
Status checkBufferSize(const std::string &what, DType t, const Shape &s);
/// `a + b` saturating at INT64_MAX: totals of buffer sizes.
int64_t addBytes(int64_t a, int64_t b);

/// The plan's buffers with concrete shapes, checked against each step (M, N,
/// K of GEMMs against their kernel spec, scale shapes against granularities,
/// program inputs against each other) and against kMaxBufferBytes (every
/// buffer and reference value; errors name it, its shape and the dims).
struct ResolvedPlan {
  DimValues dims;
  std::map<std::string, Shape> shapes; ///< buffers and reference values
};
Expected<ResolvedPlan> resolvePlan(const Plan &plan, const DimValues &dims);

/// [batch, rows, cols] of a rank-2 ([rows, cols]) or rank-3 buffer shape; a
/// rank-1 shape is one row.
struct Geometry {
  int64_t batch = 1, rows = 0, cols = 0;
};
inline Geometry geometry(const Shape &s) {
  Geometry g;
  if (s.size() == 3) {
    g.batch = s[0];
    g.rows = s[1];
    g.cols = s[2];
  } else if (s.size() == 2) {
    g.rows = s[0];
    g.cols = s[1];
  } else if (s.size() == 1) {
    g.rows = 1;
    g.cols = s[0];
  }
  return g;
}

/// A GEMM step's spec with the launch values the plan states in A's shape
/// `a`: a K-grouped GEMM's K (every group's), A's columns. The launch's M
/// is geometry(a).rows in every form: a dense or contiguous A's rows, a
/// masked A's slab ([G, max_m, K]), a K-grouped A's rows ([M, K]).
inline KernelSpec gemmLaunchValues(const PlanStep &s, const Shape &a) {
  KernelSpec spec = s.gemm;
  if (spec.kind == GemmKind::GroupedK)
    spec.k = geometry(a).cols;
  return spec;
}

} // namespace fp8

#endif // FP8_RUNTIME_PLAN_H
