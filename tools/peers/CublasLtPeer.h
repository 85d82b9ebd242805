//===- CublasLtPeer.h - cuBLASLt GEMMs our kernels are compared with ------===//
//
// The peers of fp8-bench and fp8-run --bench (library FP8CublasLtPeer), on
// the same inputs in the same process:
//   - FP8 with DeepSeek block scaling (1x128 VEC128_32F for the activations,
//     128x128 BLK128x128_32F for the weights; cuBLASLt >= 12.9, Hopper),
//   - FP8 with per-tensor scales,
//   - BF16.
// Row-major D[M, N] = A[M, K] * B[N, K]^T is computed as the column-major
// D^T[N, M] = op(B) * op(A) with TRANSA = T, TRANSB = N (the only FP8 layout
// cuBLASLt supports).
//
//===----------------------------------------------------------------------===//
#ifndef FP8_TOOLS_PEERS_CUBLASLTPEER_H
#define FP8_TOOLS_PEERS_CUBLASLTPEER_H

#include "core/Recipe.h"
#include "core/Status.h"

#include <cublasLt.h>
#include <cuda.h>

#include <string>

namespace fp8 {

/// The kinds of peer GEMM.
enum class PeerKind { Fp8BlockScaled, Fp8PerTensor, Bf16 };

/// One configured cuBLASLt matmul (descriptors + the heuristic's algorithm).
class CublasLtGemm {
public:
  CublasLtGemm() = default;
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm &) = delete;
  CublasLtGemm &operator=(const CublasLtGemm &) = delete;

  /// Configures D[M,N] (bf16) = A[M,K] * B[N,K]^T. For FP8 kinds, A/B are
  /// FP8 codes (e4m3 unless `aFormat`/`bFormat` say e5m2); scaleA/scaleB are
  /// the activation/weight scales (device pointers; one float each for
  /// per-tensor). For Bf16, A/B are bf16.
  Status init(cublasLtHandle_t handle, PeerKind kind, int64_t m, int64_t n,
              int64_t k, const void *a, const void *b, const void *scaleA,
              const void *scaleB, void *d, void *workspace,
              size_t workspaceBytes, DType aFormat = DType::E4M3FN,
              DType bFormat = DType::E4M3FN);
  /// Enqueues the matmul.
  Status run(CUstream stream);
  /// A short description of the algorithm cuBLASLt chose.
  const std::string &algoName() const { return algoName_; }

private:
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  const void *a_ = nullptr, *b_ = nullptr;
  void *d_ = nullptr, *ws_ = nullptr;
  size_t wsBytes_ = 0;
  std::string algoName_;
};

/// Turns a cublasStatus_t into a Status.
Status cublasCheck(cublasStatus_t s, const char *what);

} // namespace fp8

#endif // FP8_TOOLS_PEERS_CUBLASLTPEER_H
