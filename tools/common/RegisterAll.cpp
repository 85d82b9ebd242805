//===- RegisterAll.cpp - One registration point for MLIR tools ------------===//

#include "tools/common/RegisterAll.h"

#include "dialect/FP8Dialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::fp8::registerAllDialects(DialectRegistry &registry) {
  registry.insert<fp8::FP8Dialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
}

void mlir::fp8::registerAllPasses() {
  registerFP8Passes();
  registerFP8Pipelines();
  registerTransformsPasses();
}
