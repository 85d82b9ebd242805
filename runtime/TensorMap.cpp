//===- TensorMap.cpp - TMA descriptors ------------------------------------===//

#include "runtime/TensorMap.h"

namespace fp8 {

Expected<CUtensorMap> encodeTensorMap2D(const CudaDriver &d, const void *base,
                                        int elemBytes, uint64_t rows,
                                        uint64_t cols, uint64_t rowStrideBytes,
                                        uint32_t boxRows, uint32_t boxCols,
                                        int swizzleBytes, const char *what) {
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0)
    return errorf("expected ", what,
                  " to be 16-byte aligned for TMA, found "
                  "address ",
                  base);
  if (rowStrideBytes % 16 != 0)
    return errorf("expected the row pitch of ", what, " (", rowStrideBytes,
                  " bytes) to be a multiple of 16 for TMA");
  CUtensorMapDataType type;
  switch (elemBytes) {
  case 1:
    type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    break;
  case 2:
    type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    break;
  case 4:
    type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    break;
  default:
    return errorf("unsupported TMA element size ", elemBytes, " for ", what);
  }
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  if (swizzleBytes == 128)
    swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  else if (swizzleBytes == 64)
    swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
  else if (swizzleBytes == 32)
    swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
  cuuint64_t dims[2] = {cols, rows};
  cuuint64_t strides[1] = {rowStrideBytes};
  cuuint32_t box[2] = {boxCols, boxRows};
  cuuint32_t elemStrides[2] = {1, 1};
  CUtensorMap map;
  CUresult r = d.cuTensorMapEncodeTiled(
      &map, type, 2, const_cast<void *>(base), dims, strides, box, elemStrides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    Status s = cuCheck(r, "cuTensorMapEncodeTiled");
    return s.withContext(std::string("TMA descriptor for ") + what + " [" +
                         std::to_string(rows) + " x " + std::to_string(cols) +
                         "], box [" + std::to_string(boxRows) + " x " +
                         std::to_string(boxCols) + "]");
  }
  return map;
}

} // namespace fp8
