//===- EpilogueChain.h - A GEMM result quantized in the epilogue ----------===//
//
// What the quantizing epilogue of a GEMM computes, read off the graph: an
// fp8.scaled_matmul whose result reaches an fp8.quantize only through
// elementwise ops (one at most, the chain's only user of each value), or,
// for a GEMM over fp8.interleave_rows'd weights, through the
// fp8.deinterleave_cols of its result and one elementwise op of the two
// halves (a SwiGLU). --fp8-fuse-epilogue builds and marks these chains
// (fp8.epilogue on the matmul); the spec of a marked matmul carries the
// epilogue (gemmSpecOf), --fp8-outline-kernels folds the chain into the
// GEMM's kernel and the plan's GEMM step writes the quantize's codes and
// scales.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_PASSES_EPILOGUECHAIN_H
#define FP8_PASSES_EPILOGUECHAIN_H

#include "core/KernelSpec.h"
#include "dialect/FP8Ops.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::fp8 {

/// On an fp8.scaled_matmul: its result is quantized in the GEMM's epilogue
/// (set by --fp8-fuse-epilogue).
inline constexpr llvm::StringLiteral kEpilogueAttr = "fp8.epilogue";

/// The ops from a GEMM to the quantize of its result, and the epilogue they
/// make.
struct EpilogueChain {
  ScaledMatmulOp matmul;
  DeinterleaveColsOp split;     ///< pairs: the result's two halves
  Operation *program = nullptr; ///< the elementwise op, if any
  QuantizeOp quantize;
  ::fp8::GemmEpilogue epilogue;
};

/// The part of a chain after the values the epilogue's program reads
/// (`sources`: the GEMM's result, or the two halves of it, in the program's
/// input order): their one user, an elementwise op that reads them and
/// nothing else (or, for one source, the quantize itself), and the quantize
/// it feeds. The chain's matmul and split are left unset, the epilogue's
/// pair block 0. --fp8-fuse-epilogue reads it on the results of two matmuls
/// before it makes them one.
FailureOr<EpilogueChain> epilogueChainFrom(ArrayRef<Value> sources,
                                           std::string &why);

/// The chain from `matmul` to the quantize of its result, or failure with
/// the reason: the matmul accumulates into C; its result (or, split by an
/// fp8.deinterleave_cols, each half) has another user; the op between is
/// not elementwise, reads other tensors or broadcasts; the quantize is not
/// current scaling in row blocks (1 x C or per_row) without statistics.
FailureOr<EpilogueChain> epilogueChainOf(ScaledMatmulOp matmul,
                                         std::string &why);

} // namespace mlir::fp8

#endif // FP8_PASSES_EPILOGUECHAIN_H
