//===- Sm90Resources.h - The sm_90a kernel's resource model -----*- C++ -*-===//
//
// What the rules of the sm_90a generator (Sm90Rules.cpp) and its emitter
// (Sm90Gemm.cpp) both derive from a spec: the output's element size and
// store path, the registers of each warpgroup, the wgmma and epilogue
// widths, the ptx type of an operand. Private to the generator.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_SM90RESOURCES_H
#define FP8_CODEGEN_SM90RESOURCES_H

#include "core/KernelSpec.h"

#include <string_view>

namespace fp8::sm90 {

/// Bytes of one output element (bf16 2, f32 4).
int outBytes(const KernelSpec &s);
/// D is stored by TMA (its row pitch is a multiple of 16 bytes), else by
/// predicated stores.
bool tmaStore(const KernelSpec &s);
/// Columns per TMA store chunk (also the swizzle span).
int outChunkCols(const KernelSpec &s);
/// setmaxnreg budgets of the producer and of each consumer warpgroup (0:
/// the launch bound's).
int producerRegs(const KernelSpec &s);
int consumerRegs(const KernelSpec &s);
/// N columns per wgmma (the tensor-core accumulator's width).
int mmaN(const KernelSpec &s);
/// Columns of a warpgroup's slab staged per epilogue round, and the number
/// of staging buffers.
int epiCols(const KernelSpec &s);
int epiBuffers(const KernelSpec &s);
/// The TMA box of A's K scales (rows) and its shared-memory slot (floats):
/// BLOCK_M, except in a contiguous grouped GEMM, whose tile starts at any
/// row and the box at a 16-byte aligned one: 4 more rows, in a slot of 32
/// more floats (128-byte aligned slots). Mirrors Layout<Cfg>::kSaBox and
/// kSaTma in sm90_gemm.cuh.
int scaleTmaBoxA(const KernelSpec &s);
int scaleTmaSlotA(const KernelSpec &s);
/// Shared memory of the kernel with `epiBuffers` staging buffers.
int sharedBytesWith(const KernelSpec &s, int epiBuffers);
/// "e4m3" or "e5m2": an FP8 operand in wgmma's spelling.
std::string_view ptxType(DType t);

} // namespace fp8::sm90

#endif // FP8_CODEGEN_SM90RESOURCES_H
