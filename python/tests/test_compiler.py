"""fp8kit.compile: the committed example plans are what compiling their
models gives; diagnostics come back with file, line and column."""

import json

import pytest

import fp8kit

pytestmark = pytest.mark.skipif(
    not fp8kit.has_compiler,
    reason="fp8kit built without MLIR (FP8_ENABLE_MLIR=OFF): no compiler")


# (The committed plans are compiled with m-hint=0: the runtime picks each
# GEMM's tile for the actual M.)
@pytest.mark.parametrize("example", ["mlp", "attention-proj", "moe"])
def test_compile_gives_the_committed_plan(root, example):
    plan = fp8kit.compile(root / "examples" / f"{example}.mlir", arch="sm_90a",
                          m_hint=0)
    want = (root / "examples/plans" / f"{example}.sm_90a.plan.json").read_text()
    assert json.loads(plan.to_json()) == json.loads(want)


def test_options_reach_the_pipeline(root):
    fused = fp8kit.compile(str(root / "examples/mlp.mlir"), fuse_epilogue=True,
                           m_hint=0)
    want = (root / "examples/plans/mlp.fused.sm_90a.plan.json").read_text()
    assert json.loads(fused.to_json()) == json.loads(want)


def test_compile_text_and_run(root):
    text = (root / "examples/mlp.mlir").read_text()
    plan = fp8kit.compile(text)
    assert plan.function == "mlp"
    out = plan.run_cpu({"M": 2})
    assert set(out) == set(plan.outputs)


def test_diagnostics_name_the_place():
    with pytest.raises(ValueError) as e:
        fp8kit.compile("func.func @f() {\n  %x = arith.constant 1 : i32\n  bogus\n}\n")
    msg = str(e.value)
    assert msg.startswith("fp8kit.compile: cannot compile <string>:")
    assert "<string>:3:" in msg


def test_option_errors():
    with pytest.raises(ValueError) as e:
        fp8kit.compile("module {}", arch="sm_80")
    assert str(e.value) == ("fp8kit.compile: expected arch 'sm_90a' or "
                            "'sm_100a', found 'sm_80'")
    with pytest.raises(ValueError, match="expected sm_count in"):
        fp8kit.compile("module {}", sm_count=0)
    with pytest.raises(ValueError, match="without quotes, braces"):
        fp8kit.compile("module {}", tuning_db='a"b')


def test_hostile_input():
    deep = "module {" * 5000 + "}" * 5000
    with pytest.raises(ValueError) as e:
        fp8kit.compile(deep)
    assert "nest" in str(e.value)
    with pytest.raises(ValueError) as e:
        fp8kit.compile("/nonexistent/model.mlir")
    assert "/nonexistent/model.mlir" in str(e.value)
