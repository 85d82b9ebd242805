//===- KernelAttrs.h - The pipeline's attributes and codegen specs --------===//
//
// What the fp8 passes and fp8-translate share: the names of the pipeline's
// discardable attributes, and the thin adapter between MLIR and codegen's
// plain-C++ specs. A GEMM's spec is a typed attribute holding codegen's
// KernelSpec (#fp8.gemm, fp8.gemm until outlined, then in fp8.kernel = {kind,
// name, spec}); the quantize, transpose and elementwise specs are
// dictionaries mirroring their JSON form one-to-one.
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
/// A GEMM's spec with its tile (#fp8.gemm), until it becomes a kernel.
inline constexpr llvm::StringLiteral kGemmAttr = "fp8.gemm";
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

/// The module's fp8.target, if set.
std::optional<::fp8::Arch> getTarget(ModuleOp module);

/// The module's fp8.target, which a pass after --fp8-verify-target needs:
/// failure, with an error on the module saying so, when it is not set.
FailureOr<::fp8::Arch> requireTarget(ModuleOp module);

/// True when `init` is a matmul init that holds zeros (a zero fill, or an
/// empty tensor, whose contents the pipeline defines as zero): the matmul
/// does not accumulate.
bool isZeroInit(Value init);

/// True for a grouped matmul that stands for a batched matmul: masked, every
/// group full (built by --fp8-quantize-annotated, fp8.full_batch).
bool isFullBatch(GroupedScaledMatmulOp op);

/// The operands of an FP8 GEMM op (fp8.scaled_matmul or
/// fp8.grouped_scaled_matmul): its recipe's arguments, A, B, and C (null
/// when absent).
struct GemmOperands {
  ::fp8::ScaledGemmArgs args;
  Value a, b, c;
  bool grouped = false;
};
/// Null `a` for any other op.
GemmOperands gemmOperandsOf(Operation *op);

/// The GEMM an FP8 matmul op runs, in codegen's terms, for `arch`, with the
/// default tile: fp8.scaled_matmul, or a full-batch grouped matmul (one
/// dense GEMM per group, batchOf); with its quantizing epilogue when marked
/// fp8.epilogue (passes/EpilogueChain.h). Failure (with `why`) for other
/// ops, a dynamic N or K, or a mark whose chain does not hold.
/// --fp8-select-config derives every spec with it, once.
FailureOr<::fp8::KernelSpec> gemmSpecOf(Operation *op, ::fp8::Arch arch,
                                        std::string &why);

/// The dense GEMMs one FP8 matmul op launches: the group count of a
/// full-batch grouped matmul, 1 otherwise.
int64_t batchOf(Operation *op);

/// The op's fp8.gemm (set by --fp8-select-config), if any.
std::optional<::fp8::KernelSpec> getGemmSpec(Operation *op);
/// Sets fp8.gemm on `op`.
void setGemmSpec(Operation *op, const ::fp8::KernelSpec &spec);

/// The parts of an fp8.kernel attribute: a GEMM's spec as it is, the
/// others' as their JSON.
struct KernelRef {
  std::string kind, name;
  std::optional<::fp8::KernelSpec> gemm; ///< kind "gemm": the #fp8.gemm spec
  std::string specJson;                  ///< other kinds
};
/// Sets fp8.kernel on `op` for a GEMM: its kernel name and spec.
void setGemmKernel(Operation *op, const ::fp8::KernelSpec &spec);
/// Sets fp8.kernel on `op` for a quantize, transpose or elementwise kernel.
void setKernel(Operation *op, llvm::StringRef kind, llvm::StringRef name,
               llvm::StringRef specJson);
/// The op's fp8.kernel, if any. A kind "gemm" whose spec is not a
/// #fp8.gemm attribute has no `gemm`.
std::optional<KernelRef> getKernel(Operation *op);

/// The element type of a ranked tensor value as codegen names it.
std::optional<::fp8::DType> elementDType(Value v);

} // namespace mlir::fp8

#endif // FP8_PASSES_KERNELATTRS_H
