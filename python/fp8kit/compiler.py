"""fp8kit.compile: an FP8-annotated model to a Plan (where the MLIR half is built)."""

import os

from . import _core


def compile(model, *, arch=None, tuning_db=None, sm_count=None, m_hint=None,
            fuse_elementwise=None, fuse_residual=None, fuse_epilogue=None,
            fold_constants=None):
    """Compiles `model` (a path to an .mlir file, or MLIR text) with the
    fp8-compile pipeline (the options fp8-opt --fp8-compile{...} takes; None
    keeps its default) and returns the fp8kit.Plan fp8-translate
    --fp8-to-plan would write.

        plan = fp8kit.compile("examples/mlp.mlir", m_hint=4096)
        outputs = plan.run_cpu({"M": 8})
    """
    if not _core.has_compiler:
        raise RuntimeError(
            "fp8kit.compile: this build of fp8kit has no compiler (MLIR 22 was "
            "not found when it was built: install Debian's libmlir-22-dev and "
            "reinstall); fp8kit.Plan.load reads plans fp8-translate wrote")
    is_path = isinstance(model, os.PathLike) or (
        isinstance(model, str) and "\n" not in model and model.endswith(".mlir"))
    return _core.compile(
        os.fspath(model) if is_path else model, is_path,
        arch=arch, tuning_db=tuning_db, sm_count=sm_count, m_hint=m_hint,
        fuse_elementwise=fuse_elementwise, fuse_residual=fuse_residual,
        fuse_epilogue=fuse_epilogue, fold_constants=fold_constants)
