# `cmake --install <build> [--prefix P]`: the runtime as a package another
# CMake project consumes with find_package(fp8):
#   P/include/{core,numerics,codegen,codegen/kernels,runtime,runtime/plan}/*.h
#   P/lib/libFP8*.a and P/lib/cmake/fp8/fp8Config.cmake, whose exported
#   targets carry their include directories and dependencies:
#     fp8::core fp8::numerics fp8::codegen fp8::runtime (fp8::gemm,
#     fp8::quantize, fp8::groupedGemm: runtime/*.h) fp8::plan
#     fp8::plan_executor (plans on the CPU oracle and the GPU)
#     fp8::host_oracle (the runtime's entry points on host memory)
#     fp8::tuner (fp8-tune's measurements: runtime/Tuner.h)
#   P/bin: fp8-run, fp8-codegen, fp8-numerics, fp8-bench, fp8-tune.
# The same names are aliases in this build, for add_subdirectory consumers.
# The CUDA toolkit is found where this build found it (FP8_CUDA_ROOT); the
# driver is loaded at run time, as in every tool. examples/cpp/ is such a
# consumer (scripts/check-install.sh builds it against an install).

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_fp8_exported
  FP8Core:core FP8Numerics:numerics FP8Codegen:codegen
  FP8MemoryBudget:memory_budget FP8Runtime:runtime FP8Plan:plan
  FP8PlanExecutor:plan_executor FP8HostOracle:host_oracle FP8Tuner:tuner
  fp8_cuda_headers:cuda_headers
  fp8_nvrtc:nvrtc)
set(_fp8_targets "")
foreach(entry ${_fp8_exported})
  string(REPLACE ":" ";" pair "${entry}")
  list(GET pair 0 target)
  list(GET pair 1 name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  add_library(fp8::${name} ALIAS ${target})
  list(APPEND _fp8_targets ${target})
endforeach()

install(TARGETS ${_fp8_targets} EXPORT fp8Targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir core numerics codegen codegen/kernels runtime runtime/plan)
  file(GLOB _fp8_headers "${PROJECT_SOURCE_DIR}/${dir}/*.h")
  install(FILES ${_fp8_headers}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir})
endforeach()
foreach(tool fp8-run fp8-codegen fp8-numerics fp8-bench fp8-tune)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

install(EXPORT fp8Targets NAMESPACE fp8::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fp8)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/fp8Config.cmake.in
  ${PROJECT_BINARY_DIR}/fp8Config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fp8)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/fp8ConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fp8Config.cmake
              ${PROJECT_BINARY_DIR}/fp8ConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fp8)
