//===- KernelAttrs.h - The pipeline's attributes and codegen specs --------===//
//
// What the fp8 passes and fp8-translate share: the names of the pipeline's
// discardable attributes, and the thin adapter between MLIR and codegen's
// plain-C++ specs. Kernel specs live in the IR as dictionaries that mirror
// their JSON form one-to-one (fp8.kernel = {kind, name, spec = {...}},
// fp8.tile = {block_m = 128 : i64, ...}): codegen's toJSON/fromJSON define
// the schema, these helpers only convert JSON <-> attributes.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_KERNELATTRS_H
#define FP8_PASSES_KERNELATTRS_H

#include "core/KernelSpec.h"
#include "dialect/FP8Ops.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::fp8 {

/// A recipe on a matmul, or on a function as its default.
inline constexpr llvm::StringLiteral kRecipeAttr = "fp8.recipe";
/// Function arguments quantized once (weights).
inline constexpr llvm::StringLiteral kWeightAttr = "fp8.weight";
/// Function arguments that carry a delayed-scaling amax history.
inline constexpr llvm::StringLiteral kHistoryAttr = "fp8.amax_history";
/// Function results that return the history of argument N (an i64).
inline constexpr llvm::StringLiteral kHistoryOfAttr = "fp8.amax_history_of";
/// The module's target arch ("sm_90a", "sm_100a"), set by verify-target.
inline constexpr llvm::StringLiteral kTargetAttr = "fp8.target";
/// A GEMM's tile configuration (TileConfig JSON as a dictionary).
inline constexpr llvm::StringLiteral kTileAttr = "fp8.tile";
/// Where the tile came from ("heuristic: ...", "tuning-db: ...", "runtime").
inline constexpr llvm::StringLiteral kTileSourceAttr = "fp8.tile_source";
/// A kernel: {kind = "gemm" | "quantize" | ..., name = ..., spec = {...}}.
inline constexpr llvm::StringLiteral kKernelAttr = "fp8.kernel";
/// An elementwise op computed inside the named quantize kernel.
inline constexpr llvm::StringLiteral kFusedIntoAttr = "fp8.fused_into";
/// On a constant quantized at compile time: the original values.
inline constexpr llvm::StringLiteral kSourceAttr = "fp8.source";
/// On a grouped matmul built from a batched matmul: every group is full.
inline constexpr llvm::StringLiteral kFullBatchAttr = "fp8.full_batch";

/// The attribute form of a JSON document: objects become dictionaries,
/// arrays arrays, strings strings, integers i64, other numbers f64, booleans
/// bools, null unit. Null on invalid JSON.
Attribute jsonToAttribute(MLIRContext *ctx, llvm::StringRef json);
/// The inverse of jsonToAttribute.
std::string attributeToJson(Attribute attr);

/// The module's fp8.target, if set.
std::optional<::fp8::Arch> getTarget(ModuleOp module);

/// True for a grouped matmul that stands for a batched matmul: masked, every
/// group full (built by --fp8-quantize-annotated, fp8.full_batch).
bool isFullBatch(GroupedScaledMatmulOp op);

/// The GEMM an FP8 matmul op runs, in codegen's terms, for `arch`, with the
/// op's fp8.tile when it has one: fp8.scaled_matmul, or a full-batch grouped
/// matmul (one dense GEMM per group: `batch` receives the count).
/// Failure (with `why`) for other ops or a dynamic N or K.
FailureOr<::fp8::KernelSpec> gemmSpecOf(Operation *op, ::fp8::Arch arch,
                                        int64_t &batch, std::string &why);

/// The op's fp8.tile, when present and well-formed.
std::optional<::fp8::TileConfig> getTile(Operation *op);

/// The parts of an fp8.kernel attribute.
struct KernelRef {
  std::string kind, name, specJson;
};
/// Sets fp8.kernel on `op`.
void setKernel(Operation *op, llvm::StringRef kind, llvm::StringRef name,
               llvm::StringRef specJson);
/// The op's fp8.kernel, if any.
std::optional<KernelRef> getKernel(Operation *op);

/// The element type of a ranked tensor value as codegen names it.
std::optional<::fp8::DType> elementDType(Value v);

} // namespace mlir::fp8

#endif // FP8_PASSES_KERNELATTRS_H
