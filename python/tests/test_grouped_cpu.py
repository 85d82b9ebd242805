"""fp8kit.grouped_gemm on the CPU oracle: each of the three forms is, group by
group, fp8kit.gemm of that group alone, bit for bit (torch and NumPy), with
rows outside every group left as they were; arguments are checked before
any work with messages that name them; the custom op passes opcheck and its
fake implementation gives the shapes."""

import numpy as np
import pytest
import torch

import fp8kit
import fp8kit.library as fl
from fp8kit import QuantRecipe, Recipe

DEEPSEEK = Recipe.preset("deepseek")
POISON = -12345.0


def bits(t):
    return t.view(torch.int16) if t.dtype == torch.bfloat16 else t


def experts(g, n, k, seed):
    torch.manual_seed(seed)
    return fp8kit.quantize(torch.randn(g, n, k), DEEPSEEK.b)


def test_contiguous_groups_are_each_groups_gemm():
    torch.manual_seed(1)
    m, n, k = 300, 200, 384
    offsets = torch.tensor([0, 101, 101, 257], dtype=torch.int32)
    x = fp8kit.quantize(torch.randn(m, k), DEEPSEEK.a)
    w = experts(3, n, k, 2)
    out = torch.full((m, n), POISON, dtype=torch.bfloat16)
    d = fp8kit.grouped_gemm(x.codes, x.scales, w.codes, w.scales, offsets,
                            DEEPSEEK, out=out)
    assert d is out
    for g in range(3):
        lo, hi = offsets[g].item(), offsets[g + 1].item()
        if hi > lo:
            want = fp8kit.gemm(x.codes[lo:hi], x.scales[lo:hi], w.codes[g],
                               w.scales[g], DEEPSEEK)
            assert torch.equal(bits(d[lo:hi]), bits(want)), g
    # Rows past the last offset belong to no group: not written.
    assert bool((d[257:] == POISON).all())
    # NumPy arrays take the same path (uint8 codes, bf16 widened to f32).
    nd = fp8kit.grouped_gemm(x.codes.view(torch.uint8).numpy(),
                             x.scales.numpy(), w.codes.view(torch.uint8).numpy(),
                             w.scales.numpy(), offsets.numpy(), DEEPSEEK)
    assert nd.dtype == np.float32 and nd.shape == (m, n)
    assert (nd[:257] == d[:257].float().numpy()).all()


def test_no_routed_tokens_give_an_empty_result():
    # A step where no token reached any expert: A has no rows.
    x = fp8kit.quantize(torch.zeros(0, 256), DEEPSEEK.a)
    w = experts(3, 64, 256, 3)
    offsets = torch.zeros(4, dtype=torch.int32)
    d = fp8kit.grouped_gemm(x.codes, x.scales, w.codes, w.scales, offsets,
                            DEEPSEEK)
    assert d.shape == (0, 64)
    nd = fp8kit.grouped_gemm(x.codes.view(torch.uint8).numpy(),
                             x.scales.numpy(), w.codes.view(torch.uint8).numpy(),
                             w.scales.numpy(), offsets.numpy(), DEEPSEEK)
    assert nd.shape == (0, 64)


def test_masked_groups_write_their_valid_rows_only():
    torch.manual_seed(3)
    g, max_m, n, k = 3, 72, 136, 256
    valid = torch.tensor([7, 0, 72], dtype=torch.int32)
    x = fp8kit.quantize(torch.randn(g, max_m, k), DEEPSEEK.a)
    w = experts(g, n, k, 4)
    out = torch.full((g, max_m, n), POISON, dtype=torch.bfloat16)
    fp8kit.grouped_gemm(x.codes, x.scales, w.codes, w.scales, valid, DEEPSEEK,
                        "grouped_masked", out=out, expected_m=8)
    for i in range(g):
        v = valid[i].item()
        if v:
            want = fp8kit.gemm(x.codes[i, :v], x.scales[i, :v], w.codes[i],
                               w.scales[i], DEEPSEEK)
            assert torch.equal(bits(out[i, :v]), bits(want)), i
        assert bool((out[i, v:] == POISON).all()), i


def test_along_k_is_each_groups_slab_accumulated_into_c():
    # The experts' weight gradients: dW_g = dY_g^T X_g over each group's
    # tokens (K), accumulated into c; an empty group's result is c.
    torch.manual_seed(5)
    r = Recipe(QuantRecipe("e5m2", "1x128"), QuantRecipe("e4m3fn", "1x128"),
               128, "f32")
    m, n, k = 40, 72, 512
    offsets = torch.tensor([0, 128, 128, 512], dtype=torch.int32)
    dy = fp8kit.quantize(torch.randn(m, k), r.a)
    x = fp8kit.quantize(torch.randn(n, k), r.b)
    c = torch.randn(3, m, n)
    d = fp8kit.grouped_gemm(dy.codes, dy.scales, x.codes, x.scales, offsets, r,
                            "grouped_k", c=c)
    assert d.shape == (3, m, n) and d.dtype == torch.float32
    for g in range(3):
        lo, hi = offsets[g].item(), offsets[g + 1].item()
        if hi == lo:
            assert torch.equal(d[g], c[g])
            continue
        b0, b1 = lo // 128, hi // 128
        want = fp8kit.gemm(dy.codes[:, lo:hi], dy.scales[:, b0:b1],
                           x.codes[:, lo:hi], x.scales[:, b0:b1], r, c=c[g])
        assert torch.equal(d[g], want), g


def test_the_custom_op_passes_opcheck_and_gives_fake_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode

    torch.manual_seed(7)
    x = fp8kit.quantize(torch.randn(33, 256), DEEPSEEK.a)
    w = experts(2, 64, 256, 8)
    offsets = torch.tensor([0, 20, 33], dtype=torch.int32)
    args = (x.codes, x.scales, w.codes, w.scales, offsets, "e4m3fn", "1x128",
            "e4m3fn", "128x128", 128, "bf16", "grouped_contiguous", None, 0)
    torch.library.opcheck(torch.ops.fp8kit.grouped_gemm.default, args,
                          test_utils=("test_faketensor",
                                      "test_autograd_registration",
                                      "test_aot_dispatch_dynamic"))
    eager = fl.grouped_gemm(x.codes, x.scales, w.codes, w.scales, offsets,
                            DEEPSEEK)
    assert torch.equal(bits(eager), bits(fp8kit.grouped_gemm(
        x.codes, x.scales, w.codes, w.scales, offsets, DEEPSEEK)))
    w0, s0 = w.codes[0], w.scales[0]
    xm = torch.zeros(2, 16, 256, dtype=torch.float8_e4m3fn)
    with FakeTensorMode() as mode:
        f = lambda t: mode.from_tensor(t)
        contiguous = fl.grouped_gemm(f(x.codes), f(x.scales), f(w.codes),
                                     f(w.scales), f(offsets), DEEPSEEK)
        masked = fl.grouped_gemm(f(xm), f(torch.ones(2, 16, 2)), f(w.codes),
                                 f(w.scales), f(torch.zeros(2, dtype=torch.int32)),
                                 DEEPSEEK, "grouped_masked")
        along_k = fl.grouped_gemm(f(x.codes), f(x.scales), f(w0), f(s0),
                                  f(offsets),
                                  Recipe("1x128", "1x128", 128, "f32"),
                                  "grouped_k")
    assert contiguous.shape == (33, 64) and contiguous.dtype == torch.bfloat16
    assert masked.shape == (2, 16, 64)
    assert along_k.shape == (2, 33, 64) and along_k.dtype == torch.float32


def _contiguous_args():
    x = fp8kit.quantize(torch.randn(40, 256), DEEPSEEK.a)
    w = experts(2, 64, 256, 9)
    offsets = torch.tensor([0, 20, 40], dtype=torch.int32)
    return [x.codes, x.scales, w.codes, w.scales, offsets]


@pytest.mark.parametrize("change, kwargs, message", [
    (None, {"kind": "masked"},
     "kind: expected 'grouped_contiguous', 'grouped_masked' or 'grouped_k', "
     "found 'masked'"),
    (None, {"expected_m": 16},
     "expected_m: expected None outside the masked form, found 16"),
    ((4, lambda t: t.long()), {},
     "groups: expected int32, found int64"),
    ((4, lambda t: t[:2]), {},
     "groups: expected G + 1 = 3 offsets (b holds G = 2 matrices), found 2"),
    ((2, lambda t: t[0]), {},
     "b: expected 3 dimensions for grouped_contiguous, found 2"),
    ((2, lambda t: t[:, :, :128]), {},
     "b: expected [G, N, K] with a's K (256), found shape [2, 64, 128]"),
    ((2, lambda t: t.transpose(0, 1).contiguous().transpose(0, 1)), {},
     "b: expected the groups' matrices one after the other"),
    ((3, lambda t: t[:, :, :1]), {},
     "b_scale: expected shape [2, 1, 2], found [2, 1, 1]"),
    ((1, lambda t: t[:, :1]), {},
     "a_scale: expected shape [40, 2], found [40, 1]"),
    ((4, lambda t: torch.tensor([0, 30, 20], dtype=torch.int32)), {},
     "expected offsets[2] in [30, 40]"),
])
def test_arguments_are_checked_and_named(change, kwargs, message):
    torch.manual_seed(10)
    args = _contiguous_args()
    if change:
        i, f = change
        args[i] = f(args[i])
    with pytest.raises(ValueError) as e:
        fp8kit.grouped_gemm(*args, DEEPSEEK, **kwargs)
    assert message in str(e.value)
    assert str(e.value).startswith("fp8kit.grouped_gemm: ")


def test_forms_refuse_what_their_kernels_do_not_run():
    torch.manual_seed(11)
    x = fp8kit.quantize(torch.randn(2, 16, 256), DEEPSEEK.a)
    w = experts(3, 64, 256, 12)
    with pytest.raises(ValueError, match="b: expected .G, N, K. with a's G "
                       r"\(2\), found shape \[3, 64, 256\]"):
        fp8kit.grouped_gemm(x.codes, x.scales, w.codes, w.scales,
                            torch.zeros(2, dtype=torch.int32), DEEPSEEK,
                            "grouped_masked")
    # A's scales spanning rows: a contiguous group starts at any row.
    y = fp8kit.quantize(torch.randn(32, 256), DEEPSEEK.b)
    with pytest.raises(ValueError, match="contiguous grouped GEMM"):
        fp8kit.grouped_gemm(y.codes, y.scales, w.codes, w.scales,
                            torch.tensor([0, 8, 16, 32], dtype=torch.int32),
                            Recipe("128x128", "128x128", 128))
    # Accumulating into C is for the weight gradients (along K) only.
    z = fp8kit.quantize(torch.randn(32, 256), DEEPSEEK.a)
    with pytest.raises(ValueError, match="expected no accumulation into C in a "
                       "contiguous grouped GEMM"):
        fp8kit.grouped_gemm(z.codes, z.scales, w.codes, w.scales,
                            torch.tensor([0, 8, 16, 32], dtype=torch.int32),
                            DEEPSEEK, c=torch.zeros(32, 64, dtype=torch.bfloat16))
    # Offsets along K start at scale blocks.
    with pytest.raises(ValueError, match="multiple of 128"):
        fp8kit.grouped_gemm(z.codes, z.scales, z.codes, z.scales,
                            torch.tensor([0, 100, 256], dtype=torch.int32),
                            Recipe("1x128", "1x128", 128, "f32"), "grouped_k")


def test_the_moe_example_on_the_cpu(root):
    # examples/python/moe_experts.py at a small size: tokens routed top-2
    # over 8 experts, gate/up and down as grouped GEMMs, against BF16.
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "moe_experts", root / "examples/python/moe_experts.py")
    moe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(moe)
    diff, rel, _, _ = moe.run("cpu", tokens=64, hidden=256, ffn=128,
                              experts=8, top_k=2)
    # Two chained E4M3 GEMMs with SwiGLU between: a few percent; a wrong
    # routing or offset would be of the order of the output itself.
    assert diff < 4e-3 and rel < 0.1, (diff, rel)
