"""The PyTorch integration on CPU tensors (the CPU oracle): torch dtypes and
layouts, the torch.library custom ops (opcheck: schema, fake
implementations, torch.compile's dispatch), fp8kit.nn.Linear's autograd
against the same FP8 steps spelled out and against BF16, delayed-scaling
state in state_dict, and torch.compile of a module using it."""

import pytest
import torch

import fp8kit
import fp8kit.library as fl
import fp8kit.nn as fnn
from fp8kit import Granularity, QuantRecipe, Recipe, Scaling


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def test_codes_are_torch_float8_of_x_over_scale():
    torch.manual_seed(0)
    x = torch.randn(33, 384, dtype=torch.bfloat16)
    for fmt, dt in (("e4m3fn", torch.float8_e4m3fn), ("e5m2", torch.float8_e5m2)):
        q = fp8kit.quantize(x, fmt, "1x128")
        assert q.codes.dtype == dt and q.scales.dtype == torch.float32
        s = q.scales.repeat_interleave(128, dim=1)
        want = (x.float() / s).to(dt)
        assert torch.equal(q.codes.view(torch.uint8), want.view(torch.uint8))


def test_ue8m0_scales_are_float8_e8m0fnu():
    q = fp8kit.quantize(torch.randn(4, 64), "e4m3fn", "mx")
    assert q.scales.dtype == getattr(torch, "float8_e8m0fnu", torch.uint8)
    assert q.scales.shape == (4, 2)


def test_torch_and_numpy_agree():
    torch.manual_seed(1)
    a, b = torch.randn(16, 256), torch.randn(48, 256)
    r = Recipe.preset("deepseek")
    qa, qb = fp8kit.quantize(a, r.a), fp8kit.quantize(b, r.b)
    d = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
    assert d.dtype == torch.bfloat16
    na, nb = fp8kit.quantize(a.numpy(), r.a), fp8kit.quantize(b.numpy(), r.b)
    assert (na.codes == qa.codes.view(torch.uint8).numpy()).all()
    nd = fp8kit.gemm(na.codes, na.scales, nb.codes, nb.scales, r)
    assert (nd == d.float().numpy()).all()


def test_wrong_torch_dtypes_are_named():
    r = Recipe.preset("deepseek")
    qa = fp8kit.quantize(torch.randn(8, 128), "e5m2", "1x128")
    qb = fp8kit.quantize(torch.randn(8, 128), r.b)
    with pytest.raises(ValueError) as e:
        fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
    assert str(e.value) == ("fp8kit.gemm: a: expected torch.float8_e4m3fn (the "
                            "recipe's format) or uint8 codes, found "
                            "torch.float8_e5m2")
    with pytest.raises(ValueError, match="out_dtype: expected bfloat16"):
        fp8kit.gemm(qb.codes, qb.scales, qb.codes, qb.scales, r,
                    out_dtype=torch.float32)


# opcheck's test_schema compares outputs with arithmetic that PyTorch does not
# implement for float8 on the CPU; the others run.
CHECKS = ("test_faketensor", "test_autograd_registration",
          "test_aot_dispatch_dynamic")


def test_custom_ops_pass_opcheck():
    torch.manual_seed(2)
    x = torch.randn(9, 256, dtype=torch.bfloat16)
    r = Recipe.preset("deepseek")
    q = r.a
    torch.library.opcheck(torch.ops.fp8kit.quantize.default,
                          (x, "e4m3fn", "1x128", "current", 16, 1, 0, "max", None),
                          test_utils=CHECKS)
    d = QuantRecipe("e4m3fn", "per_tensor", Scaling("delayed", history=8))
    h = fp8kit.amax_history(d, x)
    torch.library.opcheck(torch.ops.fp8kit.quantize.default,
                          (x, "e4m3fn", "per_tensor", "delayed", 8, 1, 0, "max", h),
                          test_utils=CHECKS)
    codes, scales = fl.quantize(x, q)
    torch.library.opcheck(torch.ops.fp8kit.transpose.default,
                          (codes, scales, "e4m3fn", "1x128"),
                          test_utils=CHECKS)
    xb = torch.randn(2, 129, 136, dtype=torch.bfloat16)
    torch.library.opcheck(torch.ops.fp8kit.quantize.default,
                          (xb, "e5m2", "128x1", "current", 16, 1, 0, "max",
                           None, True),
                          test_utils=CHECKS)
    w = torch.randn(64, 256, dtype=torch.bfloat16)
    wc, ws = fl.quantize(w, r.b)
    torch.library.opcheck(torch.ops.fp8kit.gemm.default,
                          (codes, scales, wc, ws, "e4m3fn", "1x128", "e4m3fn",
                           "128x128", 128, "bf16", None),
                          test_utils=CHECKS)


def test_transposed_quantize_op_and_its_fake_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode

    torch.manual_seed(6)
    q = QuantRecipe("e4m3fn", "128x1")
    for shape in ((7, 136), (300, 2048), (2, 129, 8)):
        x = torch.randn(shape, dtype=torch.bfloat16)
        codes, scales = fl.quantize(x, q, transposed=True)
        plain = fp8kit.quantize(x, q)
        want = fp8kit.transpose(plain.codes, plain.scales, "e4m3fn", "128x1")
        assert torch.equal(codes.view(torch.uint8), want.codes.view(torch.uint8))
        assert torch.equal(scales, want.scales)
        rows, cols = shape[-2:]
        with FakeTensorMode() as mode:
            fc, fs = fl.quantize(mode.from_tensor(x), q, transposed=True)
        assert fc.shape == codes.shape == shape[:-2] + (cols, rows)
        assert fs.shape == scales.shape == shape[:-2] + (cols, -(-rows // 128))
        assert fc.dtype == torch.float8_e4m3fn and fs.dtype == torch.float32
    with pytest.raises(ValueError, match="for transposed codes and scales, "
                       "found 1x128"):
        fl.quantize(torch.randn(8, 128), QuantRecipe("e4m3fn", "1x128"),
                    transposed=True)


def manual_linear(x, w, b, dy, recipe, grad):
    """The FP8 Linear's steps spelled out with fp8kit.ops (module doc)."""
    t = x.shape[0]
    pad = -t % 16
    ga = recipe.a.granularity
    gt = Granularity(ga.cols, ga.rows, ga.scale)
    xq, wq = fp8kit.quantize(x, recipe.a), fp8kit.quantize(w, recipe.b)
    y = fp8kit.gemm(xq.codes, xq.scales, wq.codes, wq.scales, recipe) + b
    dyq = fp8kit.quantize(dy, grad)
    wt = fp8kit.transpose(wq.codes, wq.scales, "e4m3fn", recipe.b.granularity)
    dx = fp8kit.gemm(dyq.codes, dyq.scales, wt.codes, wt.scales,
                     Recipe(grad, recipe.b, recipe.promotion_interval))
    padded = lambda v: torch.nn.functional.pad(v, (0, 0, 0, pad))
    xt = fp8kit.quantize(padded(x), "e4m3fn", gt)
    xt = fp8kit.transpose(xt.codes, xt.scales, "e4m3fn", gt)
    dyt = fp8kit.quantize(padded(dy), grad.format, gt)
    dyt = fp8kit.transpose(dyt.codes, dyt.scales, grad.format, gt)
    wgrad = Recipe(QuantRecipe(grad.format, ga), recipe.a,
                   recipe.promotion_interval, "f32")
    dw = fp8kit.gemm(dyt.codes, dyt.scales, xt.codes, xt.scales, wgrad)
    return y, dx, dw.to(w.dtype), dy.float().sum(0).to(b.dtype)


@pytest.mark.parametrize("tokens", [7, 64, 129])
def test_linear_is_the_fp8_steps_and_near_bf16(tokens):
    torch.manual_seed(tokens)
    layer = fnn.Linear(256, 128)
    x = torch.randn(tokens, 256, dtype=torch.bfloat16, requires_grad=True)
    y = layer(x)
    dy = torch.randn_like(y)
    y.backward(dy)
    want = manual_linear(x.detach(), layer.weight.detach(),
                         layer.bias.detach(), dy, layer.recipe, layer.grad)
    for got, ref in zip((y, x.grad, layer.weight.grad, layer.bias.grad), want):
        assert torch.equal(got, ref)
    # Against the BF16 layer: E4M3 forward, E5M2 gradients.
    ref = torch.nn.Linear(256, 128, dtype=torch.bfloat16)
    ref.load_state_dict({"weight": layer.weight.detach(),
                         "bias": layer.bias.detach()})
    x2 = x.detach().clone().requires_grad_()
    y2 = ref(x2)
    y2.backward(dy)
    assert rel(y, y2) < 0.06
    assert rel(x.grad, x2.grad) < 0.12
    assert rel(layer.weight.grad, ref.weight.grad) < 0.12


def test_linear_fuses_the_transpose_of_its_wgrad_operands_where_it_can(
        monkeypatch):
    """x^T and dy^T by one transposed quantize for R x 1 blocks along the
    tokens with current scaling, by the quantize and the FP8 transpose
    otherwise (test_linear_is_the_fp8_steps_and_near_bf16 holds the fused
    path's gradients to the two steps spelled out). The choice is the
    recipe's writes_transposed: the runtime's rule, not a copy of it."""
    calls, choices = [], []
    quantize, transpose = fl.quantize, fl.transpose
    quantize_transposed = fnn._quantize_transposed

    def counting_quantize(x, recipe, history=None, transposed=False):
        calls.append(("quantize", recipe.granularity.name, transposed))
        return quantize(x, recipe, history, transposed)

    def counting_transpose(codes, scales, fmt, granularity):
        name = granularity if isinstance(granularity, str) else granularity.name
        calls.append(("transpose", name, False))
        return transpose(codes, scales, fmt, granularity)

    def recording_quantize_transposed(t, q, history):
        first = len(calls)
        out = quantize_transposed(t, q, history)
        choices.append((q, calls[first:]))
        return out

    def assert_choices_follow_the_recipes():
        assert choices
        for q, steps in choices:
            name = q.granularity.name
            if q.writes_transposed:
                assert steps == [("quantize", name, True)], q
            else:
                assert steps == [("quantize", name, False),
                                 ("transpose", name, False)], q
        choices.clear()

    monkeypatch.setattr(fl, "quantize", counting_quantize)
    monkeypatch.setattr(fl, "transpose", counting_transpose)
    monkeypatch.setattr(fnn, "_quantize_transposed",
                        recording_quantize_transposed)
    torch.manual_seed(7)
    x = torch.randn(33, 256, dtype=torch.bfloat16, requires_grad=True)
    layer = fnn.Linear(256, 128)  # DeepSeek: x^T and dy^T as 128x1 blocks
    layer(x).sum().backward()
    assert ("quantize", "128x1", True) in calls
    assert sum(1 for c in calls if c[2]) == 2  # x^T and dy^T
    assert [c for c in calls if c[0] == "transpose"] == [
        ("transpose", "128x128", False)]  # W^T for dgrad only
    assert_choices_follow_the_recipes()
    calls.clear()
    layer = fnn.Linear(256, 128, recipe=Recipe("per_row", "per_row", None))
    layer(x).sum().backward()  # x^T, dy^T as per_column blocks: two steps
    assert not any(c[2] for c in calls)
    assert sum(1 for c in calls if c[1] == "per_column" and
               c[0] == "transpose") == 3  # x^T, dy^T and W^T
    assert_choices_follow_the_recipes()
    calls.clear()
    layer = fnn.Linear(256, 128, recipe=Recipe("1x128", "1x128", 128))
    layer(x).sum().backward()  # W^T as 128x1 blocks: one quantize too
    assert sum(1 for c in calls if c[2]) == 3  # x^T, dy^T and W^T
    assert not any(c[0] == "transpose" for c in calls)
    assert_choices_follow_the_recipes()
    calls.clear()
    d = QuantRecipe("e4m3fn", "per_tensor", Scaling("delayed", history=4))
    layer = fnn.Linear(256, 128, recipe=Recipe(d, d, None))
    layer(x).sum().backward()  # delayed scaling: two steps
    assert not any(c[2] for c in calls)
    assert_choices_follow_the_recipes()


@pytest.mark.parametrize("weights", ["per_row", "1x128"])
def test_linear_with_rectangular_weight_blocks_requantizes_for_dgrad(weights):
    torch.manual_seed(3)
    r = Recipe("1x128", weights, 128)
    layer = fnn.Linear(128, 64, recipe=r)
    x = torch.randn(16, 128, dtype=torch.bfloat16, requires_grad=True)
    layer(x).sum().backward()
    assert x.grad.shape == x.shape and layer.weight.grad.shape == (64, 128)
    assert rel(x.grad, torch.ones(16, 64, dtype=torch.bfloat16) @
               layer.weight.detach()) < 0.12


def test_linear_delayed_scaling_state_round_trips():
    torch.manual_seed(4)
    d = Scaling("delayed", history=4)
    r = Recipe(QuantRecipe("e4m3fn", "per_tensor", d),
               QuantRecipe("e4m3fn", "per_tensor", d), None)
    layer = fnn.Linear(128, 32, recipe=r)
    names = {k for k in layer.state_dict() if k.startswith("amax_history_")}
    assert names == {"amax_history_x", "amax_history_w", "amax_history_dy",
                     "amax_history_xt", "amax_history_dyt"}
    for _ in range(3):
        layer(torch.randn(16, 128, dtype=torch.bfloat16)).sum().backward()
    state = layer.state_dict()
    assert state["amax_history_x"].any()
    fresh = fnn.Linear(128, 32, recipe=r)
    fresh.load_state_dict(state)
    x = torch.randn(16, 128, dtype=torch.bfloat16)
    assert torch.equal(fresh(x), layer(x))


def test_linear_refusals():
    with pytest.raises(ValueError, match="expected in_features to be a positive multiple of 16"):
        fnn.Linear(100, 64)
    with pytest.raises(ValueError, match="expected a recipe with bf16 out"):
        fnn.Linear(128, 64, recipe=Recipe("1x128", "128x128", 128, "f32"))
    layer = fnn.Linear(128, 64)
    with pytest.raises(ValueError, match=r"expected inputs \[..., 128\]"):
        layer(torch.randn(4, 64, dtype=torch.bfloat16))


def test_torch_compile_of_a_module_equals_eager():
    torch.manual_seed(5)
    model = torch.nn.Sequential(fnn.Linear(256, 128), torch.nn.GELU(),
                                fnn.Linear(128, 64))
    compiled = torch.compile(model)
    for tokens in (33, 20):
        x = torch.randn(tokens, 256, dtype=torch.bfloat16, requires_grad=True)
        y = compiled(x)
        assert torch.equal(y, model(x))
        y.float().sum().backward()
        assert x.grad is not None and torch.isfinite(x.grad.float()).all()
