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

/// The instruction of `p` whose value the kernels look up in a table
/// (codegen/kernels/elementwise_table.cuh), or -1: a value computed from one
/// bf16 input alone (read per element, not broadcast, and not `param`, an
/// input the caller passes in) through an exp, tanh or erf, and read by an
/// instruction that depends on more (or the result); of several, the
/// costliest (ElementwiseTable.cpp).
int tabulatedValue(const EwProgram &p, int param = -1);
/// That of a kernel's program, for the kernels whose CTAs stride over the
/// tensor (elementwise, the row path of quantize, per-tensor quantize);
/// -1 for the others.
int tabulatedValue(const ElementwiseSpec &s);
/// The one input instruction `value` of `p` depends on.
int tabulatedInput(const EwProgram &p, int value);

/// Prog (elementwise.cuh): eval, the value of one element; eval_n, up to N
/// consecutive elements, from 16-byte loads of each input or one by one
/// (the same instructions per element), and eval_vec, N of them from
/// 16-byte loads; Raw, load_raw and eval_raw, the loads and the program in
/// two phases; aligned, whether every input it reads is aligned to a
/// number of bytes. With `rowSum` (ElementwiseSpec::rowSum) also eval_n_rs
/// (the last input the parameter rs), sum_n (the row sum's program), and
/// RawS, load_raw_s, eval_raw_rs and sum_raw, both programs over one set of
/// loads. With a tabulatedValue, also Tab and prepare(p), which each entry
/// calls first (elementwise_table.cuh); `table` is p's tabulatedValue.
void emitProgram(std::ostringstream &os, const EwProgram &p,
                 const EwProgram *rowSum, int table);

/// The inputs Prog::aligned checks (vectorInputs(spec), of a program and
/// its row sum's).
std::vector<bool> vectorInputs(const EwProgram &p, const EwProgram *rowSum);

} // namespace fp8

#endif // FP8_CODEGEN_ELEMENTWISESOURCE_H
