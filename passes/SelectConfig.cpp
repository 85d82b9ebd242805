//===- SelectConfig.cpp - --fp8-select-config -----------------------------===//
//
// The tile configuration of every FP8 GEMM: the tuning database's when it
// has the recipe (same N and K, nearest M; else the nearest shape), else the
// runtime's heuristic; recorded, with the GEMM's spec, as fp8.gemm and
// fp8.tile_source.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelAttrs.h"
#include "passes/Passes.h"

#include "codegen/Gemm.h"
#include "codegen/TuningDb.h"
#include "core/Target.h"
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
      if (std::string stale = loaded->staleMessage("'" + tuningDb + "'");
          !stale.empty())
        emitWarning(module.getLoc()) << stale;
      db = std::move(*loaded);
    }
    FailureOr<::fp8::Arch> arch = requireTarget(module);
    if (failed(arch))
      return signalPassFailure();
    WalkResult r = module.walk([&](Operation *op) {
      if (!isa<ScaledMatmulOp, GroupedScaledMatmulOp>(op))
        return WalkResult::advance();
      return failed(configure(op, *arch, db)) ? WalkResult::interrupt()
                                              : WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }

  /// Derives the op's GEMM spec (the one place it is derived), chooses its
  /// tile and records both as fp8.gemm, with fp8.tile_source.
  LogicalResult configure(Operation *op, ::fp8::Arch arch,
                          const std::optional<::fp8::TuningDb> &db) {
    std::string why;
    FailureOr<::fp8::KernelSpec> derived = gemmSpecOf(op, arch, why);
    if (failed(derived))
      return success(); // no kernel for it: --fp8-outline-kernels says why
    ::fp8::KernelSpec spec = *derived;
    Builder b(op->getContext());
    auto record = [&](const ::fp8::TileConfig &tile,
                      const std::string &source) {
      spec.tile = tile;
      setGemmSpec(op, spec);
      op->setAttr(kTileSourceAttr, b.getStringAttr(source));
      return success();
    };
    // The tile is chosen for `sized`: the spec with a dynamic M replaced by
    // the hint. The spec recorded keeps M dynamic.
    ::fp8::KernelSpec sized = spec;
    std::string hint;
    if (spec.m == ::fp8::kDynamic || spec.k == ::fp8::kDynamic) {
      // A grouped GEMM's rows are the routing's (topK copies of each token,
      // plus its padding; or a group's valid rows), not the M the hint
      // names, and so is a K-grouped GEMM's K (the tokens): the runtime
      // picks its tile for them.
      if (mHint == 0 || spec.kind != ::fp8::GemmKind::Dense) {
        // The runtime picks the tile for the actual M (and K). The tile
        // recorded is the one for 4096 with the pipeline's default SM count
        // (an H100's, for either arch): the recipe and shape must suit the
        // generator whatever the runtime picks.
        if (sized.m == ::fp8::kDynamic)
          sized.m = 4096;
        if (sized.k == ::fp8::kDynamic)
          sized.k = 4096;
        return record(::fp8::selectConfig(
                          sized, ::fp8::targetInfo(::fp8::Arch::SM90a).smCount)
                          .tile,
                      "runtime");
      }
      sized.m = mHint;
      hint = " for M = " + std::to_string(mHint) + " (m-hint)";
    }
    if (db) {
      if (std::optional<::fp8::TuningDb::Match> m =
              db->lookup(sized, sized.m)) {
        ::fp8::KernelSpec tuned = sized;
        tuned.tile = m->tile;
        ::fp8::Status legal = ::fp8::checkGemmSpec(tuned);
        const std::string shape = std::to_string(m->m) + "x" +
                                  std::to_string(m->n) + "x" +
                                  std::to_string(m->k);
        if (legal)
          return record(m->tile,
                        std::string("tuning-db: ") +
                            (m->exact ? "exact " : "nearest, measured at ") +
                            shape + hint);
        op->emitWarning("the tuning database's tile (measured at ")
            << shape << ") does not fit this GEMM: " << legal.message()
            << "; using the heuristic";
      }
    }
    sized.tile = ::fp8::selectConfig(sized, smCount).tile;
    if (::fp8::Status legal = ::fp8::checkGemmSpec(sized); !legal)
      return op->emitOpError("has no legal tile configuration on ")
             << ::fp8::toString(arch) << ": " << legal.message();
    return record(sized.tile, ::fp8::kHeuristicTileSource + hint + ", " +
                                  std::to_string(smCount) + " SMs");
  }
};

} // namespace
