# Records small FP8 GEMM results of the H100 (cuBLASLt via torch._scaled_mm)
# as regression data for AccumulatorTest.H100RecordedOutputsBitForBit.
#   python3 record_h100.py <out dir>        (on the GPU machine)
# Recorded with PyTorch 2.11.0+cu130 (CUDA 13.0), NVIDIA H100 80GB HBM3,
# driver 580.159.04: E4M3 codes of A [32, 1024] and B [32, 1024] (per-tensor,
# amax -> 448), D = A B^T in FP32 with unit scales, with and without fast
# accumulation.
import sys, torch, numpy as np
out = sys.argv[1]
dev = 'cuda'
g = torch.Generator(device=dev); g.manual_seed(2026)
M = N = 32; K = 1024
one = torch.tensor(1.0, device=dev)
for dist in ['uniform', 'normal']:
    def gen(rows):
        return torch.rand(rows, K, device=dev, generator=g) if dist == 'uniform' else torch.randn(rows, K, device=dev, generator=g)
    a, b = gen(M), gen(N)
    qa = (a / (a.abs().max() / 448)).to(torch.float8_e4m3fn)
    qb = (b / (b.abs().max() / 448)).to(torch.float8_e4m3fn)
    fast = torch._scaled_mm(qa, qb.t(), scale_a=one, scale_b=one, out_dtype=torch.float32, use_fast_accum=True)
    slow = torch._scaled_mm(qa, qb.t(), scale_a=one, scale_b=one, out_dtype=torch.float32, use_fast_accum=False)
    np.save(f"{out}/h100_{dist}_a.npy", qa.view(torch.uint8).cpu().numpy())
    np.save(f"{out}/h100_{dist}_b.npy", qb.view(torch.uint8).cpu().numpy())
    np.save(f"{out}/h100_{dist}_fast.npy", fast.cpu().numpy())
    np.save(f"{out}/h100_{dist}_promoted.npy", slow.cpu().numpy())
print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())
