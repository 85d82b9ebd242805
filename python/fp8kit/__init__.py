"""fp8kit: FP8 recipes as inspectable IR, and the GPU kernels they compile to.

    import torch, fp8kit
    r = fp8kit.Recipe.preset("deepseek")   # 1x128 activations, 128x128 weights
    x = torch.randn(4096, 7168, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(2048, 7168, device="cuda", dtype=torch.bfloat16)
    xq = fp8kit.quantize(x, r.a)             # codes (float8_e4m3fn) + scales
    wq = fp8kit.quantize(w, r.b)
    y = fp8kit.gemm(xq.codes, xq.scales, wq.codes, wq.scales, r)  # [4096, 2048]

CUDA tensors run the toolkit's JIT-compiled kernels on the current stream;
CPU tensors and NumPy arrays run the CPU oracle (bit-identical quantization,
the kernels' GEMM summation order in FP32). Importing needs neither a GPU nor
PyTorch; a machine without a GPU gets a RuntimeError at its first GPU call.

Recipes print as the fp8 dialect spells them, so what you print can be
pasted into an annotated model:

    >>> fp8kit.Recipe.preset("deepseek")
    #fp8.recipe<a = <f8E4M3FN, <1x128>>, b = <f8E4M3FN, <128x128>>, promotion_interval = 128>

Submodules: fp8kit.ops (the tensor API), fp8kit.library (torch.library
custom ops for torch.compile), fp8kit.nn (an FP8 Linear with autograd).
"""

from ._core import (
    BoundPlan,
    Granularity,
    Plan,
    QuantRecipe,
    Recipe,
    Scaling,
    __version__,
    amax_history_bytes,
    device,
    has_compiler,
    set_tuning_database,
    stop_tuning_on_first_use,
    tune_on_first_use,
)
from .ops import Quantized, amax_history, gemm, grouped_gemm, quantize, transpose
from .compiler import compile

__all__ = [
    "BoundPlan",
    "Granularity",
    "Plan",
    "QuantRecipe",
    "Quantized",
    "Recipe",
    "Scaling",
    "__version__",
    "amax_history",
    "amax_history_bytes",
    "compile",
    "device",
    "gemm",
    "grouped_gemm",
    "has_compiler",
    "quantize",
    "set_tuning_database",
    "stop_tuning_on_first_use",
    "transpose",
    "tune_on_first_use",
]
