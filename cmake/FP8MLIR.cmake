# Finds MLIR/LLVM 22 (Debian's libmlir-22-dev) the way mlir/examples/standalone
# does, with the two fixes Debian's packaging needs (see BUILD-NOTES).

if(NOT MLIR_DIR AND EXISTS /usr/lib/llvm-22/lib/cmake/mlir/MLIRConfig.cmake)
  set(MLIR_DIR /usr/lib/llvm-22/lib/cmake/mlir)
endif()
find_package(MLIR REQUIRED CONFIG)
message(STATUS "Using MLIRConfig.cmake in: ${MLIR_DIR}")
message(STATUS "Using LLVMConfig.cmake in: ${LLVM_DIR}")

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)

# Debian's LLVM config does not export LLVM_EXTERNAL_LIT.
if(NOT LLVM_EXTERNAL_LIT)
  set(LLVM_EXTERNAL_LIT "${LLVM_TOOLS_BINARY_DIR}/lit" CACHE FILEPATH "lit")
endif()

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
link_directories(${LLVM_BUILD_LIBRARY_DIR})
# add_definitions(${LLVM_DEFINITIONS}) garbles -D_GLIBCXX_USE_CXX11_ABI.
separate_arguments(FP8_LLVM_DEFINITIONS NATIVE_COMMAND ${LLVM_DEFINITIONS})
add_definitions(${FP8_LLVM_DEFINITIONS})

set(FP8_TABLEGEN_OUTPUT_DIR ${PROJECT_BINARY_DIR})
