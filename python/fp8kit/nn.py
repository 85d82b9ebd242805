"""fp8kit.nn.Linear: an nn.Linear whose three GEMMs run in FP8.

    layer = fp8kit.nn.Linear(4096, 11008, recipe=fp8kit.Recipe.preset("deepseek"))
    y = layer(x)          # x [..., 4096] bf16 on the GPU (or the CPU oracle)
    y.sum().backward()    # dgrad and wgrad in FP8 too

With A = activations and B = weights as the recipe names them:

  forward  y  = x W^T:   A = x [T, in], B = W [out, in] (the recipe).
  dgrad    dx = dy W:    A = dy [T, out] quantized with `grad` (E5M2 by
           default), B = W^T [in, out]. For a square weight granularity
           (128x128, per_tensor) W^T is the FP8 transpose of the forward's
           quantized W, made when the backward needs it (Ling 2.0's
           on-demand transpose: no transposed copy is kept); otherwise W is
           quantized with the transposed granularity and transposed, by one
           transposed quantize where that allows it (1 x R weight blocks,
           current scaling; see wgrad).
  wgrad    dW = dy^T x:  A = dy^T [out, T], B = x^T [in, T], each quantized
           along the tokens, the tokens padded with zero rows to a multiple
           of 16 (the GEMM's K pitch; zeros change no amax); FP32 result,
           cast to the weight's type. For R x 1 blocks along the tokens
           with current scaling (the default 1x128 activations and
           gradients) one quantize writes the transposed codes and scales;
           otherwise (delayed scaling, other granularities) the tensor is
           quantized with the transposed granularity and then FP8
           transposed, with the same result. x^T is quantized in the
           forward and saved in FP8 instead of x.

Delayed scaling (per_tensor recipes) keeps one amax history per quantized
tensor as a buffer of the module, so state_dict saves it and
load_state_dict restores it.
"""

import torch

from . import _core
from . import library as fl


def _transposed(g):
    return _core.Granularity(g.cols, g.rows, g.scale)


def _square(g):
    return g.rows == g.cols


def _with_granularity(q, g):
    return _core.QuantRecipe(q.format, g, q.scaling)


class _Plan:
    """The quantizations and GEMM recipes of one layer."""

    def __init__(self, recipe, grad):
        self.x = recipe.a
        self.w = recipe.b
        self.dy = grad
        ga = recipe.a.granularity
        self.xt = _with_granularity(recipe.a, _transposed(ga))  # x along T
        self.dyt = _with_granularity(grad, _transposed(grad.granularity))
        self.wt = None if _square(recipe.b.granularity) else \
            _with_granularity(recipe.b, _transposed(recipe.b.granularity))
        p = recipe.promotion_interval
        self.forward = recipe
        self.dgrad = _core.Recipe(grad, recipe.b, p, "bf16")
        self.wgrad = _core.Recipe(_with_granularity(grad, grad.granularity),
                                  _with_granularity(recipe.a, ga), p, "f32")

    def delayed(self):
        """(name, recipe) of every quantization with delayed scaling."""
        named = [("x", self.x), ("w", self.w), ("dy", self.dy),
                 ("xt", self.xt), ("dyt", self.dyt)]
        if self.wt is not None:
            named.append(("wt", self.wt))
        return [(n, q) for n, q in named if q.scaling.mode == "delayed"]


def _pad_rows(t, multiple=16):
    rows = t.shape[0]
    pad = -rows % multiple
    return t if pad == 0 else torch.nn.functional.pad(t, (0, 0, 0, pad))


def _quantize_transposed(t, q, history):
    """t [rows, cols] quantized with q and transposed: codes [cols, rows] and
    their scales. One quantize where q allows it (q.writes_transposed, the
    runtime's rule), else q's quantize and then the FP8 transpose; the same
    bits either way."""
    if q.writes_transposed:
        return fl.quantize(t, q, history, transposed=True)
    codes, scales = fl.quantize(t, q, history)
    return fl.transpose(codes, scales, q.format, q.granularity)


class _LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, plan, histories):
        h = histories
        xq, xs = fl.quantize(x, plan.x, h.get("x"))
        wq, ws = fl.quantize(weight, plan.w, h.get("w"))
        y = fl.gemm(xq, xs, wq, ws, plan.forward)
        if bias is not None:
            y = y + bias.to(y.dtype)
        # x^T along the tokens for wgrad, in FP8.
        xtq, xts = _quantize_transposed(_pad_rows(x), plan.xt, h.get("xt"))
        if plan.wt is None:  # square blocks: W^T on demand in the backward
            ctx.save_for_backward(xtq, xts, wq, ws, weight)
        else:
            ctx.save_for_backward(xtq, xts, None, None, weight)
        ctx.plan, ctx.histories = plan, histories
        ctx.rows, ctx.has_bias = x.shape[0], bias is not None
        ctx.x_dtype = x.dtype
        return y

    @staticmethod
    def backward(ctx, dy):
        xtq, xts, wq, ws, weight = ctx.saved_tensors
        plan, h = ctx.plan, ctx.histories
        dy = dy.contiguous()
        if dy.dtype not in (torch.bfloat16, torch.float16, torch.float32):
            dy = dy.float()
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dyq, dys = fl.quantize(dy, plan.dy, h.get("dy"))
            if plan.wt is None:
                wtq, wts = fl.transpose(wq, ws, plan.w.format,
                                        plan.w.granularity)
            else:
                wtq, wts = _quantize_transposed(weight.detach(), plan.wt,
                                                h.get("wt"))
            dx = fl.gemm(dyq, dys, wtq, wts, plan.dgrad).to(ctx.x_dtype)
        if ctx.needs_input_grad[1]:
            dytq, dyts = _quantize_transposed(_pad_rows(dy), plan.dyt,
                                              h.get("dyt"))
            dw = fl.gemm(dytq, dyts, xtq, xts, plan.wgrad).to(weight.dtype)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            db = dy.float().sum(0).to(weight.dtype)
        return dx, dw, db, None, None


class Linear(torch.nn.Module):
    """y = x W^T + b with FP8 forward, dgrad and wgrad GEMMs (module doc).

    recipe: the forward GEMM's fp8kit.Recipe (default: the DeepSeek-V3
    recipe, 1x128 activations and 128x128 weights); grad: how the output
    gradient is quantized, an fp8kit.QuantRecipe (default: E5M2 at the
    activations' granularity and scaling). in_features and out_features are
    multiples of 16 (the FP8 GEMM's K pitch, forward and dgrad).
    """

    def __init__(self, in_features, out_features, bias=True, recipe=None,
                 grad=None, device=None, dtype=torch.bfloat16):
        super().__init__()
        for name, n in (("in_features", in_features),
                        ("out_features", out_features)):
            if n <= 0 or n % 16:
                raise ValueError(f"fp8kit.nn.Linear: expected {name} to be a "
                                 f"positive multiple of 16 (the FP8 GEMM's K "
                                 f"pitch), found {n}")
        recipe = recipe if recipe is not None else _core.Recipe.preset("deepseek")
        if recipe.out != "bf16":
            raise ValueError("fp8kit.nn.Linear: expected a recipe with bf16 "
                             f"out, found {recipe}")
        if grad is None:
            grad = _core.QuantRecipe("e5m2", recipe.a.granularity,
                                     recipe.a.scaling)
        self.in_features, self.out_features = in_features, out_features
        self.recipe, self.grad = recipe, grad
        self._plan = _Plan(recipe, grad)
        self.weight = torch.nn.Parameter(
            torch.empty(out_features, in_features, device=device, dtype=dtype))
        self.bias = torch.nn.Parameter(
            torch.empty(out_features, device=device, dtype=dtype)) if bias else None
        self._history_names = []
        for name, q in self._plan.delayed():
            buf = f"amax_history_{name}"
            self.register_buffer(buf, torch.zeros(q.history_bytes,
                                                  dtype=torch.uint8,
                                                  device=device))
            self._history_names.append((name, buf))
        self.reset_parameters()

    def reset_parameters(self):
        # As torch.nn.Linear.
        torch.nn.init.kaiming_uniform_(self.weight, a=5 ** 0.5)
        if self.bias is not None:
            bound = 1 / self.in_features ** 0.5
            torch.nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise ValueError(f"fp8kit.nn.Linear: expected inputs [..., "
                             f"{self.in_features}], found {list(x.shape)}")
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        if not x2.is_contiguous():
            x2 = x2.contiguous()
        histories = {n: getattr(self, b) for n, b in self._history_names}
        y = _LinearFunction.apply(x2, self.weight, self.bias, self._plan,
                                  histories)
        return y.reshape(*lead, self.out_features)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features="
                f"{self.out_features}, bias={self.bias is not None}, "
                f"recipe={self.recipe}, grad={self.grad}")
