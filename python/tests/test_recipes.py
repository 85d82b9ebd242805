"""The recipe objects: checked when built, printed as the fp8 dialect spells
them (core/RecipeSpelling.h, compared with the dialect's printer by
test/dialect/RecipeSpellingTest.cpp)."""

import pytest

import fp8kit
from fp8kit import Granularity, QuantRecipe, Recipe, Scaling


def test_granularity_spellings_and_fields():
    g = Granularity.parse("1x128")
    assert str(g) == repr(g) == "#fp8.granularity<1x128>"
    assert (g.rows, g.cols, g.scale, g.name) == (1, 128, "f32", "1x128")
    assert str(Granularity(None, None)) == "#fp8.granularity<per_tensor>"
    assert str(Granularity.per_row("f32_pow2")) == "#fp8.granularity<per_row:f32_pow2>"
    assert str(Granularity.per_column()) == "#fp8.granularity<per_column>"
    assert str(Granularity.mx()) == "#fp8.granularity<1x32:ue8m0>"
    assert Granularity.parse("mx") == Granularity(1, 32, "ue8m0")
    assert str(Granularity(128, None)) == "#fp8.granularity<128xwhole>"
    assert hash(Granularity.parse("128x128")) == hash(Granularity(128, 128))


def test_scale_shape_is_the_ceil_div_rule():
    assert Granularity.parse("1x128").scale_shape(7, 300) == (7, 3)
    assert Granularity.parse("128x128").scale_shape(129, 128) == (2, 1)
    assert Granularity.per_tensor().scale_shape(5, 5) == (1, 1)
    assert Granularity.per_column().scale_shape(5, 6) == (1, 6)


@pytest.mark.parametrize("args, message", [
    ((0, 128), "expected a positive block size or None (the whole dimension), found 0"),
    ((1, 128, "f64"), "expected scale to be f32, f32_pow2 or ue8m0, found 'f64'"),
])
def test_granularity_refusals(args, message):
    with pytest.raises(ValueError) as e:
        Granularity(*args)
    assert str(e.value) == "fp8kit.Granularity: " + message


def test_granularity_parse_refusal_names_the_spelling():
    with pytest.raises(ValueError) as e:
        Granularity.parse("1by128")
    assert str(e.value).startswith("fp8kit.Granularity: ")
    assert "1by128" in str(e.value)
    with pytest.raises(ValueError) as e:
        Granularity.parse(128)
    assert "expected a granularity (fp8kit.Granularity or its name" in str(e.value)


def test_scaling():
    assert str(Scaling()) == "#fp8.scaling<current>"
    s = Scaling("delayed", history=1024, interval=4, margin=2, algo="most_recent")
    assert str(s) == ("#fp8.scaling<delayed, history = 1024, interval = 4, "
                      "margin = 2, algo = most_recent>")
    assert (s.mode, s.history, s.interval, s.margin, s.algo) == (
        "delayed", 1024, 4, 2, "most_recent")
    with pytest.raises(ValueError, match="expected the amax history length"):
        Scaling("delayed", history=0)
    with pytest.raises(ValueError, match="expected the margin to be in"):
        Scaling("delayed", margin=128)
    with pytest.raises(ValueError, match="expected mode to be 'current' or 'delayed', found 'lazy'"):
        Scaling("lazy")


def test_quant_recipe():
    q = QuantRecipe("e4m3fn", "1x128")
    assert str(q) == "#fp8.quant<f8E4M3FN, <1x128>>"
    assert q.history_bytes is None
    d = QuantRecipe("e5m2", "per_tensor", Scaling("delayed", history=1024))
    assert str(d) == "#fp8.quant<f8E5M2, <per_tensor>, <delayed, history = 1024>>"
    assert d.history_bytes == fp8kit.amax_history_bytes(1024) == 16 + 4 * 1024
    assert QuantRecipe("e5m2", "per_tensor", "delayed").scaling == Scaling("delayed")
    assert QuantRecipe() == QuantRecipe("e4m3fn", Granularity(1, 128))
    with pytest.raises(ValueError) as e:
        QuantRecipe("e4m3fn", "1x128", "delayed")
    assert "expected per_tensor granularity with delayed scaling" in str(e.value)
    with pytest.raises(ValueError) as e:
        QuantRecipe("bf16")
    assert str(e.value) == ("fp8kit.QuantRecipe: expected the format to be "
                            "e4m3fn or e5m2, found 'bf16'")


def test_recipe_and_presets():
    r = Recipe.preset("deepseek")
    assert str(r) == ("#fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, "
                      "<128x128>>, promotion_interval = 128>")
    assert r == Recipe("1x128", "128x128")
    assert (r.a.granularity.name, r.b.granularity.name, r.promotion_interval,
            r.out) == ("1x128", "128x128", 128, "bf16")
    rows = Recipe("per_row", "per_row", None, "f32")
    assert str(rows) == ("#fp8.recipe<a = <f8E4M3FN, <per_row>>, b = "
                         "<f8E4M3FN, <per_row>>, out = f32>")
    assert rows.promotion_interval is None
    with pytest.raises(ValueError) as e:
        Recipe("1x128", "128x128", 96)
    assert "to divide the K block of A's scales (128)" in str(e.value)
    with pytest.raises(ValueError) as e:
        Recipe("1x128", "128x128", 128, "f16")
    assert str(e.value) == "fp8kit.Recipe: expected out to be bf16 or f32, found f16"
    with pytest.raises(ValueError) as e:
        Recipe.preset("fastest")
    assert str(e.value).startswith("fp8kit.Recipe.preset: expected a recipe named ")


def test_recipe_presets_of_every_target():
    assert Recipe.preset("per-tensor").a.granularity == Granularity.per_tensor()
    mx = Recipe.preset("mx", "sm_100a")
    assert mx.a.granularity == Granularity.mx()
    with pytest.raises(ValueError, match="expected arch to be 'sm_90a' or 'sm_100a'"):
        Recipe.preset("mx", "sm_80")
