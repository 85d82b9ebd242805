//===- CublasLtPeer.cpp - cuBLASLt GEMMs our kernels are compared with ---===//

#include "tools/peers/CublasLtPeer.h"

namespace fp8 {

Status cublasCheck(cublasStatus_t s, const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return errorf(what, " failed: cuBLAS status ", int(s));
}

CublasLtGemm::~CublasLtGemm() {
  if (desc_)
    cublasLtMatmulDescDestroy(desc_);
  for (auto l : {la_, lb_, ld_})
    if (l)
      cublasLtMatrixLayoutDestroy(l);
}

Status CublasLtGemm::init(cublasLtHandle_t handle, PeerKind kind, int64_t m,
                          int64_t n, int64_t k, const void *a, const void *b,
                          const void *scaleA, const void *scaleB, void *d,
                          void *workspace, size_t workspaceBytes, DType aFormat,
                          DType bFormat) {
  handle_ = handle;
  a_ = a;
  b_ = b;
  d_ = d;
  ws_ = workspace;
  wsBytes_ = workspaceBytes;
  const bool fp8 = kind != PeerKind::Bf16;
  FP8_RETURN_IF_ERROR(cublasCheck(
      cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
      "cublasLtMatmulDescCreate"));
  cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
  FP8_RETURN_IF_ERROR(
      cublasCheck(cublasLtMatmulDescSetAttribute(
                      desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof(opT)),
                  "set TRANSA"));
  FP8_RETURN_IF_ERROR(
      cublasCheck(cublasLtMatmulDescSetAttribute(
                      desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof(opN)),
                  "set TRANSB"));
  if (fp8) {
    // cuBLASLt's A is our weight B, its B is our activation A.
    const void *wScale = scaleB, *xScale = scaleA;
    FP8_RETURN_IF_ERROR(cublasCheck(
        cublasLtMatmulDescSetAttribute(desc_,
                                       CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                       &wScale, sizeof(wScale)),
        "set A_SCALE_POINTER"));
    FP8_RETURN_IF_ERROR(cublasCheck(
        cublasLtMatmulDescSetAttribute(desc_,
                                       CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                       &xScale, sizeof(xScale)),
        "set B_SCALE_POINTER"));
    if (kind == PeerKind::Fp8BlockScaled) {
      int32_t wMode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
      int32_t xMode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
      FP8_RETURN_IF_ERROR(cublasCheck(
          cublasLtMatmulDescSetAttribute(
              desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &wMode, sizeof(wMode)),
          "set A_SCALE_MODE"));
      FP8_RETURN_IF_ERROR(cublasCheck(
          cublasLtMatmulDescSetAttribute(
              desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &xMode, sizeof(xMode)),
          "set B_SCALE_MODE"));
    }
  }
  auto type = [&](DType f) {
    return !fp8               ? CUDA_R_16BF
           : f == DType::E5M2 ? CUDA_R_8F_E5M2
                              : CUDA_R_8F_E4M3;
  };
  // cuBLASLt's A is our B (the weights), its B our A (the activations).
  FP8_RETURN_IF_ERROR(
      cublasCheck(cublasLtMatrixLayoutCreate(&la_, type(bFormat), uint64_t(k),
                                             uint64_t(n), k),
                  "layout A"));
  FP8_RETURN_IF_ERROR(
      cublasCheck(cublasLtMatrixLayoutCreate(&lb_, type(aFormat), uint64_t(k),
                                             uint64_t(m), k),
                  "layout B"));
  FP8_RETURN_IF_ERROR(
      cublasCheck(cublasLtMatrixLayoutCreate(&ld_, CUDA_R_16BF, uint64_t(n),
                                             uint64_t(m), n),
                  "layout D"));
  cublasLtMatmulPreference_t pref;
  FP8_RETURN_IF_ERROR(cublasCheck(cublasLtMatmulPreferenceCreate(&pref),
                                  "cublasLtMatmulPreferenceCreate"));
  cublasLtMatmulPreferenceSetAttribute(pref,
                                       CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &workspaceBytes, sizeof(workspaceBytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
      handle, desc_, la_, lb_, ld_, ld_, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS || found == 0)
    return errorf("cuBLASLt has no algorithm for this ",
                  kind == PeerKind::Fp8BlockScaled ? "block-scaled FP8"
                  : kind == PeerKind::Fp8PerTensor ? "per-tensor FP8"
                                                   : "BF16",
                  " GEMM (status ", int(s), ", ", found, " found)");
  algo_ = result.algo;
  algoName_ = "cublasLt(ws " + std::to_string(result.workspaceSize) + ")";
  return Status::ok();
}

Status CublasLtGemm::run(CUstream stream) {
  const float alpha = 1.0f, beta = 0.0f;
  // cuBLASLt's A is our B (the weights), its B our A (the activations).
  return cublasCheck(cublasLtMatmul(handle_, desc_, &alpha, b_, la_, a_, lb_,
                                    &beta, d_, ld_, d_, ld_, &algo_, ws_,
                                    wsBytes_,
                                    reinterpret_cast<cudaStream_t>(stream)),
                     "cublasLtMatmul");
}

} // namespace fp8
