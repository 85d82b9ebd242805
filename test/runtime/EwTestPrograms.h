//===- EwTestPrograms.h - Elementwise programs the kernel tests share -*- C++
//-*-===//
//
// The elementwise programs that the compile tests and the emulated kernels
// both build: GELU in its tanh and erf forms, and one program that holds
// every op with the NaN rules in it.
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TEST_RUNTIME_EWTESTPROGRAMS_H
#define FP8_TEST_RUNTIME_EWTESTPROGRAMS_H

#include "codegen/Elementwise.h"

#include <cmath>

namespace fp8::test {

/// GELU, tanh form, in f32, over one input of type `in`.
inline EwProgram geluTanh(DType in) {
  using A = EwArg;
  EwProgram p;
  p.inputs = {in};
  p.instrs = {
      {EwOp::Mul, {A::input(0), A::input(0)}, DType::F32},
      {EwOp::Mul, {A::result(0), A::input(0)}, DType::F32},
      {EwOp::Fma,
       {A::constant(0.044715f), A::result(1), A::input(0)},
       DType::F32},
      {EwOp::Mul, {A::constant(0.7978845608f), A::result(2)}, DType::F32},
      {EwOp::Tanh, {A::result(3)}, DType::F32},
      {EwOp::Add, {A::constant(1.0f), A::result(4)}, DType::F32},
      {EwOp::Mul, {A::constant(0.5f), A::input(0)}, DType::F32},
      {EwOp::Mul, {A::result(6), A::result(5)}, DType::F32}};
  p.result = A::result(7);
  return p;
}

/// GELU, erf form, over one input of type `in`, rounded to bf16.
inline EwProgram geluErf(DType in) {
  using A = EwArg;
  EwProgram p;
  p.inputs = {in};
  p.instrs = {{EwOp::Convert, {A::input(0)}, DType::F32},
              {EwOp::Mul, {A::result(0), A::constant(0.70710678f)}, DType::F32},
              {EwOp::Erf, {A::result(1)}, DType::F32},
              {EwOp::Add, {A::result(2), A::constant(1.0f)}, DType::F32},
              {EwOp::Mul, {A::result(0), A::result(3)}, DType::F32},
              {EwOp::Mul, {A::result(4), A::constant(0.5f)}, DType::BF16}};
  p.result = A::result(5);
  return p;
}

/// Residual add with erf and the NaN rules in it (every op compiled once).
inline EwProgram everyOp() {
  using A = EwArg;
  EwProgram p;
  p.inputs = {DType::F16, DType::F32, DType::BF16};
  p.instrs = {{EwOp::Sub, {A::input(0), A::input(1)}, DType::F32},
              {EwOp::Erf, {A::result(0)}, DType::F32},
              {EwOp::Abs, {A::result(1)}, DType::F32},
              {EwOp::Sqrt, {A::result(2)}, DType::F32},
              {EwOp::Rsqrt, {A::result(3)}, DType::F16},
              {EwOp::Maximum, {A::result(4), A::input(2)}, DType::F32},
              {EwOp::Minimum, {A::result(5), A::constant(3.0f)}, DType::F32},
              {EwOp::MaxNum, {A::result(6), A::constant(-1.0f)}, DType::F32},
              {EwOp::MinNum, {A::result(7), A::constant(INFINITY)}, DType::F32},
              {EwOp::Add, {A::result(8), A::input(2)}, DType::BF16}};
  p.result = A::result(9);
  return p;
}

} // namespace fp8::test

#endif // FP8_TEST_RUNTIME_EWTESTPROGRAMS_H
