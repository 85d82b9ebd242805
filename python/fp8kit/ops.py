"""The tensor API: quantize, transpose and gemm on torch tensors or NumPy arrays.

Outputs are allocated here, on the input's device, and filled by the
extension without copies (torch tensors read through their attributes,
other arrays through DLPack): CUDA tensors by the toolkit's kernels
on the current CUDA stream, CPU tensors and NumPy arrays by the CPU oracle.
FP8 codes are torch.float8_e4m3fn / float8_e5m2 tensors (uint8 arrays in
NumPy); f32 scales are float32, UE8M0 scales uint8.

Scale layouts. Scales are [ceil(rows / r), ceil(cols / c)] for an r x c
granularity over the tensor as stored, row-major. fp8kit.gemm also takes
them column-major (any strides), the layout torch._scaled_mm wants for
blockwise and rowwise scales:

    ours -> torch._scaled_mm:  scale.t().contiguous().t()   (same shape)
    torch._scaled_mm -> ours:  pass as it is, or scale.contiguous()

A per-tensor scale may be a 0-d tensor, as torch._scaled_mm's.
"""

from typing import Any, NamedTuple, Optional

from . import _core

_FP8_TORCH = {"e4m3fn": "float8_e4m3fn", "e5m2": "float8_e5m2"}
_OUT_TORCH = {"bf16": "bfloat16", "f32": "float32"}


class Quantized(NamedTuple):
    """Codes and scales of a quantized tensor, with its statistics when asked
    for (underflow, range collapse, errors: numerics/Stats.h)."""

    codes: Any
    scales: Any
    stats: Optional[dict] = None


def _is_torch(x):
    t = type(x)
    return t.__module__ == "torch" or t.__module__.split(".")[0] == "torch"


_torch_module = None


def _torch():
    global _torch_module
    if _torch_module is None:
        import torch

        _torch_module = torch
    return _torch_module


_raw_stream = None
# torch.Tensor once a CUDA tensor was seen (the launch paths' identity check,
# cheaper than _is_torch).
_tensor_type = None


def _stream(t):
    """The current CUDA stream of t's device (0 for host tensors)."""
    global _raw_stream, _tensor_type
    if not _is_torch(t) or not t.is_cuda:
        return 0
    if _raw_stream is None:
        torch = _torch()
        _tensor_type = torch.Tensor
        # A plain int, without making a Stream object each call.
        _raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda i: torch.cuda.current_stream(i).cuda_stream)
    return _raw_stream(t.get_device())


def _detached(t):
    return t.detach() if _is_torch(t) and t.requires_grad else t


def _empty(like, shape, kind):
    """An uninitialized array like `like` (torch or NumPy): kind 'e4m3fn',
    'e5m2', 'f32', 'bf16', 'ue8m0'."""
    if _is_torch(like):
        torch = _torch()
        if kind in _FP8_TORCH:
            dtype = getattr(torch, _FP8_TORCH[kind])
        elif kind == "ue8m0":
            dtype = getattr(torch, "float8_e8m0fnu", torch.uint8)
        else:
            dtype = getattr(torch, _OUT_TORCH[kind])
        return torch.empty(shape, dtype=dtype, device=like.device)
    import numpy as np

    dtype = {"f32": np.float32, "bf16": np.uint16}.get(kind, np.uint8)
    return np.empty(shape, dtype=dtype)


def _recipe(fmt, granularity, scale_format, scaling):
    if isinstance(fmt, _core.QuantRecipe):
        if granularity is not None or scale_format is not None or scaling is not None:
            raise ValueError(
                "fp8kit.quantize: expected either a QuantRecipe or fmt, "
                "granularity, scale_format and scaling, found both")
        return fmt
    g = _core.Granularity.parse(granularity if granularity is not None else "1x128")
    if scale_format is not None and scale_format != g.scale:
        g = _core.Granularity(g.rows, g.cols, scale_format)
    return _core.QuantRecipe(fmt if fmt is not None else "e4m3fn", g, scaling)


def _check_codes(t, fmt, fn, name):
    """FP8 torch tensors must carry the recipe's format."""
    if _is_torch(t) and t.dtype != _torch().uint8:
        want = _FP8_TORCH[fmt]
        if str(t.dtype) != "torch." + want:
            raise ValueError(f"{fn}: {name}: expected torch.{want} (the "
                             f"recipe's format) or uint8 codes, found {t.dtype}")


def _check_recipe(recipe, out_dtype, fn):
    """A GEMM's recipe is a Recipe, and out_dtype, if given, its out type."""
    if not isinstance(recipe, _core.Recipe):
        raise ValueError(f"{fn}: recipe: expected an fp8kit.Recipe, found "
                         f"{type(recipe).__name__}")
    if out_dtype is not None:
        name = str(out_dtype).replace("torch.", "")
        if name != _OUT_TORCH[recipe.out]:
            raise ValueError(f"{fn}: out_dtype: expected {_OUT_TORCH[recipe.out]} "
                             f"(the recipe's out, {recipe.out}), found {name}")


def amax_history(recipe, like=None):
    """A zeroed amax history state for delayed scaling with `recipe` (a
    QuantRecipe), on the device of `like` (a torch tensor; NumPy without)."""
    size = recipe.history_bytes
    if size is None:
        raise ValueError("fp8kit.amax_history: expected a recipe with delayed "
                         f"scaling, found {recipe}")
    if like is not None and _is_torch(like):
        return _torch().zeros(size, dtype=_torch().uint8, device=like.device)
    import numpy as np

    return np.zeros(size, dtype=np.uint8)


def quantize(x, fmt="e4m3fn", granularity=None, scale_format=None,
             scaling=None, *, history=None, stats=False, transposed=False,
             amax=None):
    """Quantizes x ([rows, cols] or [batch, rows, cols]; bf16, f16 or f32).

    fmt is 'e4m3fn' or 'e5m2', or a QuantRecipe (then leave the rest None);
    granularity a Granularity or its name ('1x128', the default; 'per_row',
    '128x128', 'mx', ...); scale_format 'f32', 'f32_pow2' or 'ue8m0'
    overrides the granularity's; scaling 'current', 'delayed' or a Scaling.
    Delayed scaling reads and updates `history` (fp8kit.amax_history).
    stats=True also returns the statistics of the quantization (for CUDA
    tensors computed by the CPU oracle on a host copy: a monitor, not for
    every step).

    transposed=True writes the codes transposed, [.., cols, rows], with the
    scales of the transposed granularity (c x r) over them, [..,
    ceil(cols / c), ceil(rows / r)]: transpose(*quantize(x, ...)) in one
    pass, bit for bit. Only for R x 1 blocks ('128x1') with current scaling
    (the weight gradient's operands, quantized along the tokens; the
    recipe's writes_transposed says so); other recipes raise ValueError.

    amax, for per-tensor current scaling: each matrix's amax, already known
    (f32, shaped as the per-tensor scales: [1, 1] or [batch, 1, 1]; a GEMM
    epilogue computes it), so that x is read once, not twice. The scale is
    made from it as from x's own; values it does not bound saturate.
    """
    fn = "fp8kit.quantize"
    recipe = _recipe(fmt, granularity, scale_format, scaling)
    x = _detached(x)
    shape = tuple(x.shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"{fn}: x: expected 2 or 3 dimensions, found "
                         f"{len(shape)} (shape {list(shape)})")
    rows, cols = shape[-2], shape[-1]
    sshape = shape[:-2] + recipe.granularity.scale_shape(rows, cols)
    if transposed:
        shape = shape[:-2] + (cols, rows)
        sshape = sshape[:-2] + (sshape[-1], sshape[-2])
    codes = _empty(x, shape, recipe.format)
    scales = _empty(x, sshape, "ue8m0" if recipe.granularity.scale == "ue8m0"
                    else "f32")
    on_gpu = _is_torch(x) and x.device.type == "cuda"
    host_stats = None
    if stats and on_gpu:
        # The oracle's statistics of the same call (the history as it is
        # before the GPU's step).
        host_history = history.cpu().clone() if history is not None else None
        host = quantize(x.cpu(), recipe, history=host_history, stats=True,
                        amax=amax.cpu() if amax is not None else None)
        host_stats = host.stats
    got = _core.quantize(x, codes, scales, recipe, history, _stream(x),
                         stats and not on_gpu, transposed, amax)
    return Quantized(codes, scales, host_stats if on_gpu else got)


def transpose(codes, scales, fmt="e4m3fn", granularity="1x128"):
    """The FP8 transpose of quantized codes [.., rows, cols] with their scales
    (granularity r x c): codes [.., cols, rows] with scales of granularity
    c x r. Exact: the same as quantizing the transposed input."""
    fn = "fp8kit.transpose"
    g = _core.Granularity.parse(granularity) if isinstance(granularity, str) else granularity
    _check_codes(codes, fmt, fn, "codes")
    shape = tuple(codes.shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"{fn}: codes: expected 2 or 3 dimensions, found "
                         f"{len(shape)} (shape {list(shape)})")
    out_codes = _empty(codes, shape[:-2] + (shape[-1], shape[-2]), fmt)
    sshape = tuple(scales.shape)
    out_scales = _empty(scales, sshape[:-2] + sshape[-1:] + sshape[-2:-1],
                        "ue8m0" if g.scale == "ue8m0" else "f32")
    _core.transpose(codes, scales, out_codes, out_scales, fmt, g,
                    _stream(codes))
    return Quantized(out_codes, out_scales)


def gemm(a, a_scale, b, b_scale, recipe, out_dtype=None, c=None, *, out=None):
    """d = a b^T (+ c) with the recipe's scaling: a [M, K] and b [N, K] FP8
    codes (row-major, any row pitch), their scales, d [M, N] in the recipe's
    out type (out_dtype, if given, must agree: torch.bfloat16 or
    torch.float32), written into `out` when given (torch, [M, N]).
    NumPy: bf16 results come back widened to float32."""
    fn = "fp8kit.gemm"
    if type(recipe) is not _core.Recipe or out_dtype is not None:
        _check_recipe(recipe, out_dtype, fn)
    if ((type(a) is _tensor_type or _is_torch(a)) and a.is_cuda
            and (out is not None or a.dim() == 2)):
        # The launch path: the extension reads the tensors' own attributes
        # and checks every argument (messages name it; a's rank too when
        # `out` is given) before the launch.
        if _raw_stream is None:
            _stream(a)
        d = out
        if d is None:
            torch = _torch()
            # b's rank is checked with the rest (a 1-D b is refused).
            d = torch.empty((a.shape[0], b.shape[0]), device=a.device,
                            dtype=getattr(torch, _OUT_TORCH[recipe.out]))
        _core.gemm(a, a_scale, b, b_scale, d, recipe, c,
                   _raw_stream(a.get_device()))
        return d
    _check_codes(a, recipe.a.format, fn, "a")
    _check_codes(b, recipe.b.format, fn, "b")
    for name, t in (("a", a), ("b", b)):
        if len(t.shape) != 2:
            raise ValueError(f"{fn}: {name}: expected 2 dimensions, found "
                             f"{len(t.shape)} (shape {list(t.shape)})")
    d = _empty(a, (a.shape[0], b.shape[0]), recipe.out) if out is None else out
    if c is not None:
        c = _detached(c)
    _core.gemm(a, a_scale, b, b_scale, d, recipe, c, _stream(a))
    if not _is_torch(d) and recipe.out == "bf16":
        import numpy as np

        d = (d.astype(np.uint32) << 16).view(np.float32)
    return d


_GROUPED_KINDS = ("grouped_contiguous", "grouped_masked", "grouped_k")


def grouped_out_shape(kind, a, b, groups):
    """D's shape of a grouped GEMM of `kind` (plain arithmetic on the
    operands' shapes, which may be symbolic): [M, N] contiguous, [G, max_m,
    N] masked, [G, M, N] along K."""
    if kind == "grouped_masked":
        return (a.shape[0], a.shape[1], b.shape[1])
    if kind == "grouped_k":
        return (groups.shape[0] - 1, a.shape[0], b.shape[0])
    return (a.shape[0], b.shape[1])


def grouped_gemm(a, a_scale, b, b_scale, groups, recipe,
                 kind="grouped_contiguous", out_dtype=None, c=None, *,
                 out=None, expected_m=None):
    """G GEMMs of one recipe in one launch: the experts of a mixture-of-experts
    layer (runtime/GroupedGemm.h). The group boundaries are an int32 tensor
    on a's device, read by the kernel (no host synchronisation).

    kind='grouped_contiguous' (prefill, dgrad): a [M, K] holds the groups'
      rows one after the other (tokens sorted by expert), b [G, N, K] one
      matrix an expert, groups the offsets [G + 1] (group g is rows
      groups[g] .. groups[g + 1]; any row, no padding); d [M, N]. A's scales
      cover one row (1x128, per-row) or the whole tensor: [M, K / 128].
    kind='grouped_masked' (decode): a [G, max_m, K], groups the valid rows
      [G]; d [G, max_m, N]. expected_m, the rows a group is expected to
      hold, chooses the tile (default max_m).
    kind='grouped_k' (the experts' weight gradients, dW_g = dY_g^T X_g):
      a [M, K] and b [N, K] hold every group's K slab (K-major), groups the
      offsets along K [G + 1], multiples of 128; d [G, M, N], accumulated
      into c when given (c may be out).

    Stacked scales are [G, scale rows, scale cols], any strides. D's rows
    outside every group (past the last offset; a masked group's rows past
    its valid count) are not written. Returns d.
    """
    fn = "fp8kit.grouped_gemm"
    _check_recipe(recipe, out_dtype, fn)
    if kind not in _GROUPED_KINDS:
        raise ValueError(f"{fn}: kind: expected 'grouped_contiguous', "
                         f"'grouped_masked' or 'grouped_k', found {kind!r}")
    _check_codes(a, recipe.a.format, fn, "a")
    _check_codes(b, recipe.b.format, fn, "b")
    masked, along_k = kind == "grouped_masked", kind == "grouped_k"
    for name, t, rank in (("a", a, 3 if masked else 2),
                          ("b", b, 2 if along_k else 3), ("groups", groups, 1)):
        if len(t.shape) != rank:
            raise ValueError(f"{fn}: {name}: expected {rank} dimensions for "
                             f"{kind}, found {len(t.shape)} (shape "
                             f"{list(t.shape)})")
    d = out
    if d is None:
        shape = grouped_out_shape(kind, a, b, groups)
        if along_k and shape[0] < 1:
            raise ValueError(f"{fn}: groups: expected G + 1 offsets along K "
                             f"(G >= 1), found {groups.shape[0]}")
        d = _empty(a, shape, recipe.out)
    if c is not None:
        c = _detached(c)
    _core.grouped_gemm(a, a_scale, b, b_scale, groups, d, recipe, kind, c,
                       0 if expected_m is None else expected_m, _stream(a))
    if not _is_torch(d) and recipe.out == "bf16":
        import numpy as np

        d = (d.astype(np.uint32) << 16).view(np.float32)
    return d
