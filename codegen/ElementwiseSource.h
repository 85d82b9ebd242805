//===- ElementwiseSource.h - Programs as CUDA source ------------*- C++ -*-===//
//
// What the generators of codegen/ write programs and element types with
// (codegen/ElementwiseSource.cpp). Private to codegen/.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_CODEGEN_ELEMENTWISESOURCE_H
#define FP8_CODEGEN_ELEMENTWISESOURCE_H

#include "codegen/Elementwise.h"

#include <sstream>

namespace fp8 {

/// The fp8_math.h constant of an element type ("kBF16", ...) and of a scale
/// format ("kScaleF32", ...).
const char *typeConst(DType t);
const char *scaleConst(ScaleFormat f);

/// True when the program only converts (a plain quantize): the kernels
/// evaluate it again rather than keep its values in registers (Prog's
/// kConvertOnly).
bool isConvertOnly(const EwProgram &p);

/// Prog (elementwise.cuh): eval, the value of one element; eval_n, up to N
/// consecutive elements, from 16-byte loads of each input or one by one
/// (the same instructions per element), and eval_vec, N of them from
/// 16-byte loads; Raw, load_raw and eval_raw, the loads and the program in
/// two phases; aligned, whether every input it reads is aligned to a
/// number of bytes. With `rowSum` (ElementwiseSpec::rowSum) also eval_n_rs
/// (the last input the parameter rs), sum_n (the row sum's program), and
/// RawS, load_raw_s, eval_raw_rs and sum_raw, both programs over one set of
/// loads.
void emitProgram(std::ostringstream &os, const EwProgram &p,
                 const EwProgram *rowSum = nullptr);

} // namespace fp8

#endif // FP8_CODEGEN_ELEMENTWISESOURCE_H
