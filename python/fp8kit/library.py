"""fp8kit's kernels as torch.library custom ops, for torch.compile.

    import fp8kit.library as fl
    codes, scales = fl.quantize(x, recipe.a)
    y = fl.gemm(codes, scales, w_codes, w_scales, recipe)

The ops (torch.ops.fp8kit.quantize, .transpose, .gemm, .grouped_gemm) take
the recipe as its fields (strings and integers, which the op schema can
carry), run the CUDA kernels or the CPU oracle like fp8kit.ops, and have
fake implementations that give the output shapes and types without running
anything, so torch.compile traces through them (dynamic shapes included).
Delayed scaling's history is an argument the quantize op mutates; its
`transposed` flag writes the codes and scales transposed, as
fp8kit.quantize's. (No argument is called `mode`: torch.compile's dispatch
takes that name.)
"""

import functools
from typing import Optional

import torch

from . import _core, ops

_FP8 = {"e4m3fn": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
_OUT = {"bf16": torch.bfloat16, "f32": torch.float32}
_UE8M0 = getattr(torch, "float8_e8m0fnu", torch.uint8)


@functools.lru_cache(maxsize=None)
def _quant_recipe(fmt, granularity, mode, history, interval, margin, algo):
    return _core.QuantRecipe(
        fmt, granularity, _core.Scaling(mode, history, interval, margin, algo))


@functools.lru_cache(maxsize=None)
def _recipe(a_fmt, a_granularity, b_fmt, b_granularity, promotion_interval,
            out):
    return _core.Recipe(
        _core.QuantRecipe(a_fmt, a_granularity),
        _core.QuantRecipe(b_fmt, b_granularity),
        None if promotion_interval < 0 else promotion_interval, out)


def _quant_args(q):
    s = q.scaling
    return (q.format, q.granularity.name, s.mode, s.history, s.interval,
            s.margin, s.algo)


def _blocks(size, block):
    """Scales along a dimension (plain arithmetic: sizes may be symbolic)."""
    return 1 if block is None else -(-size // block)


def _scale_dtype(granularity):
    return _UE8M0 if _core.Granularity.parse(granularity).scale == "ue8m0" \
        else torch.float32


@torch.library.custom_op("fp8kit::quantize", mutates_args=("history",))
def _quantize_op(x: torch.Tensor, fmt: str, granularity: str, scaling: str,
                 history_length: int, interval: int, margin: int, algo: str,
                 history: Optional[torch.Tensor],
                 transposed: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    r = _quant_recipe(fmt, granularity, scaling, history_length, interval,
                      margin, algo)
    q = ops.quantize(x, r, history=history, transposed=transposed)
    return q.codes, q.scales


@_quantize_op.register_fake
def _(x, fmt, granularity, scaling, history_length, interval, margin, algo,
      history, transposed=False):
    g = _core.Granularity.parse(granularity)
    lead = tuple(x.shape[:-2])
    rows, cols = x.shape[-2], x.shape[-1]
    srows, scols = _blocks(rows, g.rows), _blocks(cols, g.cols)
    if transposed:
        shape, sshape = lead + (cols, rows), lead + (scols, srows)
    else:
        shape, sshape = tuple(x.shape), lead + (srows, scols)
    return (x.new_empty(shape, dtype=_FP8[fmt]),
            x.new_empty(sshape, dtype=_scale_dtype(granularity)))


@torch.library.custom_op("fp8kit::transpose", mutates_args=())
def _transpose_op(codes: torch.Tensor, scales: torch.Tensor, fmt: str,
                  granularity: str) -> tuple[torch.Tensor, torch.Tensor]:
    t = ops.transpose(codes, scales, fmt, granularity)
    return t.codes, t.scales


@_transpose_op.register_fake
def _(codes, scales, fmt, granularity):
    cs, ss = tuple(codes.shape), tuple(scales.shape)
    return (codes.new_empty(cs[:-2] + (cs[-1], cs[-2])),
            scales.new_empty(ss[:-2] + (ss[-1], ss[-2])))


@torch.library.custom_op("fp8kit::gemm", mutates_args=())
def _gemm_op(a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor,
             b_scale: torch.Tensor, a_fmt: str, a_granularity: str, b_fmt: str,
             b_granularity: str, promotion_interval: int, out: str,
             c: Optional[torch.Tensor]) -> torch.Tensor:
    r = _recipe(a_fmt, a_granularity, b_fmt, b_granularity,
                promotion_interval, out)
    return ops.gemm(a, a_scale, b, b_scale, r, c=c)


@_gemm_op.register_fake
def _(a, a_scale, b, b_scale, a_fmt, a_granularity, b_fmt, b_granularity,
      promotion_interval, out, c):
    return a.new_empty((a.shape[0], b.shape[0]), dtype=_OUT[out])


@torch.library.custom_op("fp8kit::grouped_gemm", mutates_args=())
def _grouped_gemm_op(a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor,
                     b_scale: torch.Tensor, groups: torch.Tensor, a_fmt: str,
                     a_granularity: str, b_fmt: str, b_granularity: str,
                     promotion_interval: int, out: str, kind: str,
                     c: Optional[torch.Tensor],
                     expected_m: int) -> torch.Tensor:
    r = _recipe(a_fmt, a_granularity, b_fmt, b_granularity,
                promotion_interval, out)
    return ops.grouped_gemm(a, a_scale, b, b_scale, groups, r, kind, c=c,
                            expected_m=expected_m or None)


@_grouped_gemm_op.register_fake
def _(a, a_scale, b, b_scale, groups, a_fmt, a_granularity, b_fmt,
      b_granularity, promotion_interval, out, kind, c, expected_m):
    return a.new_empty(ops.grouped_out_shape(kind, a, b, groups),
                       dtype=_OUT[out])


def quantize(x, recipe, history=None, transposed=False):
    """torch.ops.fp8kit.quantize with a QuantRecipe: (codes, scales), written
    transposed with transposed=True (fp8kit.quantize says for which
    recipes)."""
    return torch.ops.fp8kit.quantize(x, *_quant_args(recipe), history,
                                     transposed)


def transpose(codes, scales, fmt, granularity):
    """torch.ops.fp8kit.transpose: (codes, scales) transposed."""
    g = granularity if isinstance(granularity, str) else granularity.name
    return torch.ops.fp8kit.transpose(codes, scales, fmt, g)


def gemm(a, a_scale, b, b_scale, recipe, c=None):
    """torch.ops.fp8kit.gemm with a Recipe."""
    p = recipe.promotion_interval
    return torch.ops.fp8kit.gemm(
        a, a_scale, b, b_scale, recipe.a.format, recipe.a.granularity.name,
        recipe.b.format, recipe.b.granularity.name, -1 if p is None else p,
        recipe.out, c)


def grouped_gemm(a, a_scale, b, b_scale, groups, recipe,
                 kind="grouped_contiguous", c=None, expected_m=None):
    """torch.ops.fp8kit.grouped_gemm with a Recipe (fp8kit.grouped_gemm says
    what each kind takes)."""
    p = recipe.promotion_interval
    return torch.ops.fp8kit.grouped_gemm(
        a, a_scale, b, b_scale, groups, recipe.a.format,
        recipe.a.granularity.name, recipe.b.format, recipe.b.granularity.name,
        -1 if p is None else p, recipe.out, kind, c,
        0 if expected_m is None else expected_m)
