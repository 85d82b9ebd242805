# Locates the CUDA toolkit the runtime compiles against: headers (cuda.h for
# the driver API types, cuda_fp8.h for the device code NVRTC compiles), NVRTC
# and, for the benchmark only, cuBLASLt and the CUDA runtime.
#
# The driver (libcuda.so.1) is never linked: the runtime dlopens it on first
# use, so every tool starts on a machine without a GPU.

set(FP8_CUDA_HINTS "")
if(DEFINED ENV{CUDA_HOME})
  list(APPEND FP8_CUDA_HINTS "$ENV{CUDA_HOME}")
endif()
if(DEFINED ENV{CUDA_PATH})
  list(APPEND FP8_CUDA_HINTS "$ENV{CUDA_PATH}")
endif()
list(APPEND FP8_CUDA_HINTS /usr/local/cuda)

set(FP8_CUDA_ROOT "" CACHE PATH "CUDA toolkit root (default: $CUDA_HOME, then /usr/local/cuda)")
if(NOT FP8_CUDA_ROOT)
  foreach(hint ${FP8_CUDA_HINTS})
    if(EXISTS "${hint}/include/cuda.h")
      set(FP8_CUDA_ROOT "${hint}" CACHE PATH "CUDA toolkit root" FORCE)
      break()
    endif()
  endforeach()
endif()

if(NOT FP8_CUDA_ROOT OR NOT EXISTS "${FP8_CUDA_ROOT}/include/cuda.h")
  message(FATAL_ERROR
    "CUDA toolkit not found: looked for include/cuda.h under "
    "'${FP8_CUDA_HINTS}'. Install CUDA 13 at /usr/local/cuda or set CUDA_HOME "
    "(or -DFP8_CUDA_ROOT=...).")
endif()

set(FP8_CUDA_INCLUDE_DIR "${FP8_CUDA_ROOT}/include")
find_library(FP8_NVRTC_LIBRARY nvrtc
  HINTS "${FP8_CUDA_ROOT}/lib64" "${FP8_CUDA_ROOT}/lib"
        "${FP8_CUDA_ROOT}/targets/x86_64-linux/lib"
  NO_DEFAULT_PATH)
if(NOT FP8_NVRTC_LIBRARY)
  message(FATAL_ERROR "NVRTC (libnvrtc.so) not found under ${FP8_CUDA_ROOT}")
endif()

# NVRTC's version becomes part of every cache key, and the CCCL headers
# (include/cccl) are handed to it as an include path.
file(STRINGS "${FP8_CUDA_INCLUDE_DIR}/cuda.h" _fp8_cuda_version_line
     REGEX "^#define CUDA_VERSION [0-9]+")
string(REGEX REPLACE "^#define CUDA_VERSION ([0-9]+).*" "\\1"
       FP8_CUDA_VERSION "${_fp8_cuda_version_line}")
if(FP8_CUDA_VERSION LESS 12080)
  message(FATAL_ERROR
    "CUDA ${FP8_CUDA_VERSION} at ${FP8_CUDA_ROOT} is too old: expected CUDA >= 12.8 "
    "(sm_100a and the FP8 block-scaled cuBLASLt modes); CUDA 13 is what we test")
endif()
message(STATUS "CUDA toolkit: ${FP8_CUDA_ROOT} (CUDA_VERSION ${FP8_CUDA_VERSION})")

add_library(fp8_cuda_headers INTERFACE)
target_include_directories(fp8_cuda_headers SYSTEM INTERFACE "${FP8_CUDA_INCLUDE_DIR}")
target_compile_definitions(fp8_cuda_headers INTERFACE
  FP8_CUDA_ROOT="${FP8_CUDA_ROOT}")

add_library(fp8_nvrtc INTERFACE)
target_link_libraries(fp8_nvrtc INTERFACE fp8_cuda_headers "${FP8_NVRTC_LIBRARY}")

# cuBLASLt and cudart: the benchmark's peers only.
find_library(FP8_CUBLASLT_LIBRARY cublasLt
  HINTS "${FP8_CUDA_ROOT}/lib64" "${FP8_CUDA_ROOT}/lib" NO_DEFAULT_PATH)
find_library(FP8_CUDART_LIBRARY cudart
  HINTS "${FP8_CUDA_ROOT}/lib64" "${FP8_CUDA_ROOT}/lib" NO_DEFAULT_PATH)
