# FP8_SANITIZE=ON builds the project's own code (libraries, tools, tests)
# with AddressSanitizer and UndefinedBehaviorSanitizer; scripts/test-sanitizers.sh
# builds and runs that configuration. The prebuilt libraries we link (MLIR and
# LLVM as Debian ships them, GoogleTest, NVRTC) stay uninstrumented: the flags
# reach only what this project compiles.
#
# Every UBSan check is fatal (-fno-sanitize-recover): a report fails the test
# that triggered it instead of scrolling past. Run the binaries with the
# ASAN_OPTIONS scripts/test-sanitizers.sh sets: allow_user_poisoning=0 there
# keeps LLVM's allocator headers, instrumented here but not in the installed
# libraries, from reporting false use-after-poison errors.

option(FP8_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

if(FP8_SANITIZE)
  set(FP8_SANITIZE_FLAGS
    -fsanitize=address,undefined
    -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer)
  message(STATUS "FP8_SANITIZE: building with ${FP8_SANITIZE_FLAGS}")
  # Directory scope, before any target is declared: every target of ours
  # compiles and links with them; imported targets are not rebuilt.
  add_compile_options(${FP8_SANITIZE_FLAGS})
  add_link_options(${FP8_SANITIZE_FLAGS})
endif()
