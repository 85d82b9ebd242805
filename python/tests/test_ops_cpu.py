"""The tensor API on the CPU oracle (NumPy arrays): layouts, results and
every argument check. The oracle itself is verified bit-exact against
cuda_fp8.h by the C++ suite; these tests check what the bindings add."""

import numpy as np
import pytest

import fp8kit
from fp8kit import Granularity, QuantRecipe, Recipe, Scaling

rng = np.random.default_rng(7)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def dequantize(q, g, fmt="e4m3fn"):
    """codes * scales with a NumPy decode of the FP8 codes."""
    codes = q.codes.astype(np.int32)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    mbits, bias = (3, 7) if fmt == "e4m3fn" else (2, 15)
    e = (codes >> mbits) & ((0x7F >> mbits))
    m = codes & ((1 << mbits) - 1)
    val = np.where(e == 0, m / (1 << mbits) * 2.0 ** (1 - bias),
                   (1 + m / (1 << mbits)) * 2.0 ** (e - bias))
    rows, cols = q.codes.shape
    br = rows if g.rows is None else g.rows
    bc = cols if g.cols is None else g.cols
    s = np.repeat(np.repeat(q.scales, br, 0), bc, 1)[:rows, :cols]
    return sign * val * s


@pytest.mark.parametrize("granularity", ["1x128", "128x128", "per_row",
                                         "per_tensor", "per_column", "32x64"])
@pytest.mark.parametrize("shape", [(1, 128), (7, 300), (129, 256)])
def test_quantize_round_trip(granularity, shape):
    x = randn(*shape)
    g = Granularity.parse(granularity)
    q = fp8kit.quantize(x, "e4m3fn", g)
    assert q.codes.shape == shape and q.codes.dtype == np.uint8
    assert q.scales.shape == g.scale_shape(*shape)
    assert q.scales.dtype == np.float32 and q.stats is None
    err = np.abs(dequantize(q, g) - x)
    # E4M3: 3 mantissa bits, so each value within half an ulp (2^-4 relative).
    assert np.all(err <= np.abs(x) * 2.0 ** -4 + 1e-30 + 2.0 ** -9 * q.scales.max())


def test_quantize_scale_is_amax_over_448():
    x = randn(3, 256)
    q = fp8kit.quantize(x, "e4m3fn", "1x128")
    amax = np.abs(x.reshape(3, 2, 128)).max(-1)
    assert np.array_equal(q.scales, (amax / np.float32(448)).astype(np.float32))


def test_batch_and_ue8m0_scales():
    x = randn(2, 5, 64)
    q = fp8kit.quantize(x, "e5m2", "mx")
    assert q.codes.shape == (2, 5, 64)
    assert q.scales.shape == (2, 5, 2) and q.scales.dtype == np.uint8
    q0 = fp8kit.quantize(x[0], "e5m2", "mx")
    assert np.array_equal(q.codes[0], q0.codes) and np.array_equal(q.scales[0], q0.scales)
    assert np.array_equal(
        fp8kit.quantize(x, "e5m2", "1x32", scale_format="ue8m0").scales, q.scales)


def test_statistics():
    x = randn(4, 128)
    x[0, :5] = 1e-12  # underflows next to an amax of order 1
    q = fp8kit.quantize(x, "e4m3fn", "per_tensor", stats=True)
    assert q.stats["elements"] == 512 and q.stats["blocks"] == 1
    assert q.stats["underflow"] == 5
    assert q.stats["amax"] == pytest.approx(np.abs(x).max())
    assert 0 <= q.stats["range_collapse_ratio"] < 1
    with pytest.raises(ValueError, match="expected one matrix when statistics"):
        fp8kit.quantize(randn(2, 4, 128), stats=True)


def test_delayed_scaling_history():
    r = QuantRecipe("e4m3fn", "per_tensor", Scaling("delayed", history=4))
    h = fp8kit.amax_history(r)
    assert h.shape == (r.history_bytes,) and not h.any()
    x = randn(8, 128)
    first = fp8kit.quantize(x, r, history=h, stats=True)
    assert not first.stats["used_history"]  # an empty history: current
    second = fp8kit.quantize(4 * x, r, history=h, stats=True)
    assert second.stats["used_history"]
    assert second.scales[0, 0] == first.scales[0, 0]  # step 0's amax
    assert second.stats["overflow"] > 0
    third = fp8kit.quantize(x, r, history=h, stats=True)
    assert third.scales[0, 0] == pytest.approx(4 * first.scales[0, 0])


def test_delayed_scaling_refusals():
    r = QuantRecipe("e4m3fn", "per_tensor", "delayed")
    with pytest.raises(ValueError) as e:
        fp8kit.quantize(randn(2, 16), r)
    assert "history: expected the amax history state of delayed scaling" in str(e.value)
    with pytest.raises(ValueError) as e:
        fp8kit.quantize(randn(2, 16), history=np.zeros(80, np.uint8))
    assert "history: expected None with current scaling" in str(e.value)
    with pytest.raises(ValueError) as e:
        fp8kit.quantize(randn(2, 16), r, history=np.zeros(8, np.uint8))
    assert "history: expected at least 80 bytes, found 8" in str(e.value)
    garbage = np.full(r.history_bytes, 0xFF, np.uint8)
    with pytest.raises(ValueError) as e:
        fp8kit.quantize(randn(2, 16), r, history=garbage)
    assert "expected an amax history state of length 16" in str(e.value)


@pytest.mark.parametrize("make, message", [
    (lambda: randn(4), "x: expected 2 or 3 dimensions, found 1 (shape [4])"),
    (lambda: randn(4, 128).astype(np.float64),
     "x: expected bfloat16, float16 or float32, found float64"),
    (lambda: randn(128, 4).T, "x: expected a contiguous (row-major, packed) "
     "array, found strides [1, 4] for shape [4, 128]"),
])
def test_quantize_argument_errors(make, message):
    with pytest.raises(ValueError) as e:
        fp8kit.quantize(make())
    assert str(e.value) == "fp8kit.quantize: " + message


def test_low_level_quantize_checks_outputs():
    x = randn(4, 256)
    r = QuantRecipe()
    with pytest.raises(ValueError) as e:
        fp8kit._core.quantize(x, np.empty((4, 256), np.int8),
                              np.empty((4, 2), np.float32), r)
    assert str(e.value) == ("fp8kit.quantize: codes: expected float8_e4m3fn "
                            "(or uint8 bytes), found int8")
    with pytest.raises(ValueError) as e:
        fp8kit._core.quantize(x, np.empty((4, 256), np.uint8),
                              np.empty((4, 3), np.float32), r)
    assert str(e.value) == ("fp8kit.quantize: scales: expected shape [4, 2], "
                            "found [4, 3]")
    with pytest.raises(ValueError) as e:
        fp8kit._core.quantize(x, np.empty((4, 256), np.uint8),
                              np.empty((4, 2), np.uint8), r)
    assert "scales: expected float32, found uint8" in str(e.value)


def gemm_reference(qa, ga, qb, gb, fmt_a="e4m3fn", fmt_b="e4m3fn"):
    return dequantize(qa, ga, fmt_a) @ dequantize(qb, gb, fmt_b).T


@pytest.mark.parametrize("m, n, k", [(1, 64, 128), (7, 96, 256),
                                     (129, 200, 384), (64, 128, 144)])
def test_gemm_matches_the_dequantized_product(m, n, k):
    r = Recipe("1x128", "128x128", 128, "f32")
    a, b = randn(m, k), randn(n, k)
    qa, qb = fp8kit.quantize(a, r.a), fp8kit.quantize(b, r.b)
    d = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
    assert d.shape == (m, n) and d.dtype == np.float32
    ref = gemm_reference(qa, r.a.granularity, qb, r.b.granularity)
    bound = 1e-5 * (np.abs(dequantize(qa, r.a.granularity)) @
                    np.abs(dequantize(qb, r.b.granularity)).T)
    assert np.all(np.abs(d - ref) <= bound + 1e-6)


def test_gemm_bf16_out_accumulate_and_pitch():
    r = Recipe("per_row", "per_row", None)  # bf16 out
    a, b = randn(16, 128), randn(32, 128)
    qa, qb = fp8kit.quantize(a, r.a), fp8kit.quantize(b, r.b)
    d = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, r)
    ref = gemm_reference(qa, r.a.granularity, qb, r.b.granularity)
    assert d.dtype == np.float32  # bf16 widened for NumPy
    assert np.all(np.abs(d - ref) <= np.abs(ref) * 2.0 ** -8 + 1e-3)
    # A as a view with a row pitch of 256 codes.
    wide = np.zeros((16, 256), np.uint8)
    wide[:, :128] = qa.codes
    d2 = fp8kit.gemm(wide[:, :128], qa.scales, qb.codes, qb.scales, r)
    assert np.array_equal(d, d2)
    # Column-major scales (torch._scaled_mm's layout) give the same result.
    sa = np.asfortranarray(qa.scales)
    assert np.array_equal(fp8kit.gemm(qa.codes, sa, qb.codes, qb.scales, r), d)
    rf = Recipe("per_row", "per_row", None, "f32")
    c = randn(16, 32)
    dc = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, rf, c=c)
    plain = fp8kit.gemm(qa.codes, qa.scales, qb.codes, qb.scales, rf)
    assert np.allclose(dc, plain + c, rtol=1e-6, atol=1e-6)


def test_gemm_argument_errors():
    r = Recipe.preset("deepseek")
    qa = fp8kit.quantize(randn(8, 256), r.a)
    qb = fp8kit.quantize(randn(64, 256), r.b)
    qk = fp8kit.quantize(randn(64, 128), r.b)

    def err(*args, **kw):
        with pytest.raises(ValueError) as e:
            fp8kit.gemm(*args, **kw)
        return str(e.value)

    assert err(qa.codes, qa.scales, qk.codes, qk.scales, r) == (
        "fp8kit.gemm: b: expected [N, K] with a's K (256), found shape [64, 128]")
    assert err(qa.codes, qb.scales, qb.codes, qb.scales, r) == (
        "fp8kit.gemm: a_scale: expected shape [8, 2], found [1, 2]")
    assert err(qa.codes, qa.scales, qb.codes, qb.scales, "deepseek") == (
        "fp8kit.gemm: recipe: expected an fp8kit.Recipe, found str")
    assert err(qa.codes[:, :200], qa.scales, qb.codes[:, :200], qb.scales,
               r).startswith("fp8kit.gemm: expected K (200) to be a multiple "
                             "of 16")
    assert "out_dtype: expected bfloat16" in err(
        qa.codes, qa.scales, qb.codes, qb.scales, r, out_dtype="float32")
    bad = np.lib.stride_tricks.as_strided(qa.scales, strides=(0, 4))
    assert err(qa.codes, bad, qb.codes, qb.scales, r) == (
        "fp8kit.gemm: a_scale: expected positive strides, found [0, 1] "
        "(elements)")
    rf = Recipe("per_row", "per_row", None, "f32")
    pa, pb = fp8kit.quantize(randn(8, 256), rf.a), fp8kit.quantize(randn(64, 256), rf.b)
    assert err(pa.codes, pa.scales, pb.codes, pb.scales, rf,
               c=randn(8, 32)) == ("fp8kit.gemm: c: expected shape [8, 64], "
                                   "found [8, 32]")
    assert err(pa.codes, pa.scales, pb.codes, pb.scales, rf,
               c=randn(8, 64).astype(np.float16)) == (
        "fp8kit.gemm: c: expected float32, found float16")


def test_transpose_equals_quantizing_the_transpose():
    for g in ["1x128", "128x128", "32x64", "per_tensor"]:
        x = randn(129, 200)
        gr = Granularity.parse(g)
        q = fp8kit.quantize(x, "e4m3fn", gr)
        t = fp8kit.transpose(q.codes, q.scales, "e4m3fn", gr)
        want = fp8kit.quantize(np.ascontiguousarray(x.T), "e4m3fn",
                               Granularity(gr.cols, gr.rows))
        assert np.array_equal(t.codes, want.codes), g
        assert np.array_equal(t.scales, want.scales), g


@pytest.mark.parametrize("granularity", ["128x1", "32x1"])
@pytest.mark.parametrize("shape", [(1, 8), (7, 136), (129, 8), (129, 2048),
                                   (300, 136), (2, 300, 2048)])
@pytest.mark.parametrize("fmt", ["e4m3fn", "e5m2"])
def test_transposed_quantize_is_the_quantize_then_the_transpose(fmt, shape,
                                                               granularity):
    x = randn(*shape) * 3
    g = Granularity.parse(granularity)
    q = fp8kit.quantize(x, fmt, g)
    want = fp8kit.transpose(q.codes, q.scales, fmt, g)
    got = fp8kit.quantize(x, fmt, g, transposed=True)
    rows, cols = shape[-2:]
    assert got.codes.shape == shape[:-2] + (cols, rows)
    assert got.scales.shape == shape[:-2] + g.scale_shape(rows, cols)[::-1]
    assert np.array_equal(got.codes, want.codes)
    assert np.array_equal(got.scales, want.scales)


def test_transposed_quantize_refusals_name_transposed():
    x = randn(129, 136)
    for granularity in ("1x128", "per_column", "128x128", "per_tensor"):
        with pytest.raises(ValueError) as e:
            fp8kit.quantize(x, "e4m3fn", granularity, transposed=True)
        assert str(e.value) == (
            "fp8kit.quantize: expected blocks of several rows by one column "
            "(R x 1, R > 1, such as 128x1) with current scaling for "
            f"transposed codes and scales, found {granularity}")
    # Delayed scaling: refused before the history is read or written.
    r = QuantRecipe("e4m3fn", "per_tensor", Scaling("delayed", history=4))
    h = fp8kit.amax_history(r)
    with pytest.raises(ValueError, match="for transposed codes and scales, "
                       "found per_tensor delayed"):
        fp8kit.quantize(x, r, history=h, transposed=True)
    assert not h.any()
    # The low-level call checks the transposed shapes of its outputs.
    with pytest.raises(ValueError) as e:
        fp8kit._core.quantize(x, np.empty((129, 136), np.uint8),
                              np.empty((136, 2), np.float32),
                              QuantRecipe("e4m3fn", "128x1"), transposed=True)
    assert str(e.value) == ("fp8kit.quantize: codes: expected shape "
                            "[136, 129], found [129, 136]")


@pytest.mark.parametrize("recipe, writes", [
    (QuantRecipe("e4m3fn", "128x1"), True),
    (QuantRecipe("e5m2", "256x1"), True),
    (QuantRecipe("e4m3fn", "1x128"), False),
    (QuantRecipe("e4m3fn", "128x128"), False),
    (QuantRecipe("e4m3fn", "per_column"), False),
    (QuantRecipe("e4m3fn", "per_tensor"), False),
    (QuantRecipe("e4m3fn", "per_tensor", Scaling("delayed", history=4)),
     False),
])
def test_quantize_takes_transposed_exactly_where_the_recipe_writes_it(
        recipe, writes):
    # The runtime's rule (quantizeWritesTransposed), as the recipe reports it
    # and as fp8kit.quantize applies it.
    assert recipe.writes_transposed is writes
    x = randn(129, 136)
    h = fp8kit.amax_history(recipe) if recipe.history_bytes else None
    if writes:
        got = fp8kit.quantize(x, recipe, history=h, transposed=True)
        assert got.codes.shape == (136, 129)
    else:
        with pytest.raises(ValueError, match="for transposed codes and "
                           "scales"):
            fp8kit.quantize(x, recipe, history=h, transposed=True)


def test_plan_and_compile_are_exported():
    assert fp8kit.Plan.load.__doc__
    assert callable(fp8kit.compile)


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_no_rows_quantize_and_multiply_to_empty_results(lib):
    # A batch of no tokens: empty codes and scales, an empty product (an
    # empty array's data pointer is null, and NumPy gives it any strides).
    r = Recipe("1x128", "128x128", 128, "f32")
    if lib == "torch":
        torch = pytest.importorskip("torch")
        x, w = torch.zeros(0, 256), torch.randn(64, 256)
    else:
        x, w = np.zeros((0, 256), np.float32), randn(64, 256)
    qx, qw = fp8kit.quantize(x, r.a), fp8kit.quantize(w, r.b)
    assert tuple(qx.codes.shape) == (0, 256)
    assert tuple(qx.scales.shape) == (0, 2)
    d = fp8kit.gemm(qx.codes, qx.scales, qw.codes, qw.scales, r)
    assert tuple(d.shape) == (0, 64)
    # A scale of a block of no elements is refused, naming why.
    with pytest.raises(ValueError, match="expected a non-empty tensor"):
        fp8kit.quantize(x, QuantRecipe("e4m3fn", "per_tensor"))


@pytest.mark.parametrize("shape", [(7, 136), (2, 129, 200)])
def test_a_given_amax_makes_the_per_tensor_scale(shape):
    x = randn(*shape) * 3
    batch = shape[0] if len(shape) == 3 else 1
    amax = np.abs(x).reshape(batch, -1).max(axis=1).astype(np.float32)
    amax = amax.reshape(shape[:-2] + (1, 1))
    plain = fp8kit.quantize(x, "e4m3fn", "per_tensor")
    given = fp8kit.quantize(x, "e4m3fn", "per_tensor", amax=amax)
    assert np.array_equal(given.codes, plain.codes)
    assert np.array_equal(given.scales, plain.scales)
    # Half the amax: the scale halves, the largest values saturate (0x7E,
    # 448, signed).
    half = fp8kit.quantize(x, "e4m3fn", "per_tensor", amax=amax / 2)
    assert np.array_equal(half.scales, (amax / 2 / np.float32(448)))
    big = np.abs(x) == amax
    assert np.all((half.codes[big] & 0x7F) == 0x7E)


def test_a_given_amax_is_refused_off_per_tensor_current_scaling():
    x = randn(7, 136)
    amax = np.ones((1, 1), dtype=np.float32)
    with pytest.raises(ValueError) as e:
        fp8kit.quantize(x, "e4m3fn", "1x128", amax=amax)
    assert str(e.value) == (
        "fp8kit.quantize: expected per-tensor current scaling with a given "
        "amax (amax), found 1x128")
    with pytest.raises(ValueError) as e:
        fp8kit.quantize(x, "e4m3fn", "per_tensor",
                        amax=np.ones((1,), dtype=np.float32))
    assert "amax" in str(e.value) and "[1, 1]" in str(e.value)
