//===- SelectConfig.cpp - --fp8-select-config -----------------------------===//
//
// The tile configuration of every FP8 GEMM: the tuning database's when it
// has the recipe (same N and K, nearest M; else the nearest shape), else the
// runtime's heuristic; recorded as fp8.tile and fp8.tile_source.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelAttrs.h"
#include "passes/Passes.h"

#include "codegen/Gemm.h"
#include "codegen/TuningDb.h"
#include "dialect/FP8Ops.h"

#include "mlir/IR/Builders.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8SELECTCONFIG
#include "passes/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

struct SelectConfigPass
    : mlir::fp8::impl::FP8SelectConfigBase<SelectConfigPass> {
  using FP8SelectConfigBase::FP8SelectConfigBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (smCount < 1 || mHint < 0) {
      emitError(module.getLoc(),
                "expected sm-count >= 1 and m-hint >= 0, found ")
          << "sm-count = " << int(smCount) << ", m-hint = " << int64_t(mHint);
      return signalPassFailure();
    }
    std::optional<::fp8::TuningDb> db;
    if (!tuningDb.empty()) {
      ::fp8::Expected<::fp8::TuningDb> loaded = ::fp8::TuningDb::load(tuningDb);
      if (!loaded) {
        emitError(module.getLoc()) << loaded.message();
        return signalPassFailure();
      }
      db = std::move(*loaded);
    }
    std::optional<::fp8::Arch> arch = getTarget(module);
    if (!arch) {
      emitError(module.getLoc(), "expected the module's 'fp8.target' (run "
                                 "--fp8-verify-target{arch=...} first)");
      return signalPassFailure();
    }
    WalkResult r = module.walk([&](Operation *op) {
      if (!isa<ScaledMatmulOp, GroupedScaledMatmulOp>(op))
        return WalkResult::advance();
      return failed(configure(op, *arch, db)) ? WalkResult::interrupt()
                                              : WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult configure(Operation *op, ::fp8::Arch arch,
                          const std::optional<::fp8::TuningDb> &db) {
    int64_t batch = 1;
    std::string why;
    FailureOr<::fp8::KernelSpec> spec = gemmSpecOf(op, arch, batch, why);
    if (failed(spec))
      return success(); // no kernel for it: --fp8-outline-kernels says why
    Builder b(op->getContext());
    std::string hint;
    if (spec->m == ::fp8::kDynamic) {
      if (mHint == 0) {
        op->setAttr(kTileSourceAttr, b.getStringAttr("runtime"));
        op->removeAttr(kTileAttr);
        return success();
      }
      spec->m = mHint;
      hint = " for M = " + std::to_string(mHint) + " (m-hint)";
    }
    auto record = [&](const std::string &source) {
      op->setAttr(kTileAttr,
                  jsonToAttribute(op->getContext(), ::fp8::toJSON(spec->tile)));
      op->setAttr(kTileSourceAttr, b.getStringAttr(source));
    };
    if (db) {
      if (std::optional<::fp8::TuningDb::Match> m =
              db->lookup(*spec, spec->m)) {
        ::fp8::KernelSpec tuned = *spec;
        tuned.tile = m->tile;
        ::fp8::Status legal = ::fp8::checkGemmSpec(tuned);
        const std::string shape = std::to_string(m->m) + "x" +
                                  std::to_string(m->n) + "x" +
                                  std::to_string(m->k);
        if (legal) {
          spec->tile = m->tile;
          record(std::string("tuning-db: ") +
                 (m->exact ? "exact " : "nearest, measured at ") + shape +
                 hint);
          return success();
        }
        op->emitWarning("the tuning database's tile (measured at ")
            << shape << ") does not fit this GEMM: " << legal.message()
            << "; using the heuristic";
      }
    }
    ::fp8::ConfigChoice choice = ::fp8::selectConfig(*spec, smCount);
    spec->tile = choice.tile;
    if (::fp8::Status legal = ::fp8::checkGemmSpec(*spec); !legal)
      return op->emitOpError("has no legal tile configuration on ")
             << ::fp8::toString(arch) << ": " << legal.message();
    record("heuristic" + hint + ", " + std::to_string(smCount) + " SMs");
    return success();
  }
};

} // namespace
