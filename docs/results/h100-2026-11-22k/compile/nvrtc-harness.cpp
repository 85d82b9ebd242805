//===- nvrtc-harness.cpp - NVRTC compile times of generated kernels -------===//
//
// The measuring tool of docs/journal/2026-11-22-hopper-kernel.md, 22k:
// compiles each generated source (fp8-codegen --emit cuda) REPS times in one
// process, after a one-line warm-up, and prints per compile the wall, user
// and system milliseconds, minor page faults and the peak RSS.
//   g++ -O2 -std=c++17 nvrtc-harness.cpp -I/usr/local/cuda/include \
//       -L/usr/local/cuda/lib64 -lnvrtc -o nvc
//   INC=-I<dir holding fp8/ -> codegen/kernels> ./nvc a.cu,b.cu 3 [opts]
//       [-o first.cubin]
// PREFAULT=MiB touches that much heap first (with GLIBC_TUNABLES keeping
// freed memory, the VM's first-touch cost leaves the compiles).
//
//===----------------------------------------------------------------------===//
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nvrtc.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <vector>
int main(int argc, char **argv) {
  std::vector<std::string> files;
  {
    std::string a = argv[1];
    size_t p0 = 0;
    while (true) {
      size_t p = a.find(',', p0);
      files.push_back(a.substr(p0, p == std::string::npos ? p : p - p0));
      if (p == std::string::npos)
        break;
      p0 = p + 1;
    }
  }
  int reps = atoi(argv[2]);
  std::vector<const char *> opts = {"--gpu-architecture=sm_90a", "-std=c++17",
                                    getenv("INC") ? getenv("INC")
                                                  : "-I/tmp/ct/inc"};
  const char *out = nullptr;
  for (int i = 3; i < argc; ++i) {
    if (std::string(argv[i]) == "-o") {
      out = argv[++i];
      continue;
    }
    opts.push_back(argv[i]);
  }
  if (getenv("PREFAULT")) {
    size_t n = size_t(atoi(getenv("PREFAULT"))) << 20;
    char *p = (char *)malloc(n);
    memset(p, 1, n);
    free(p);
  }
  // warm start-up
  {
    nvrtcProgram p;
    nvrtcCreateProgram(&p, "extern \"C\" __global__ void k(){}", "w.cu", 0, 0,
                       0);
    const char *o[] = {"--gpu-architecture=sm_90a"};
    nvrtcCompileProgram(p, 1, o);
    nvrtcDestroyProgram(&p);
  }
  for (const std::string &fn : files) {
    std::ifstream f(fn);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string src = ss.str();
    printf("== %s\n", fn.c_str());
    for (int r = 0; r < reps; ++r) {
      nvrtcProgram p;
      nvrtcCreateProgram(&p, src.c_str(), "k.cu", 0, 0, 0);
      rusage u0, u1;
      getrusage(RUSAGE_SELF, &u0);
      auto t0 = std::chrono::steady_clock::now();
      nvrtcResult rc = nvrtcCompileProgram(p, opts.size(), opts.data());
      auto t1 = std::chrono::steady_clock::now();
      getrusage(RUSAGE_SELF, &u1);
      double us = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) * 1e3 +
                  (u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) / 1e3;
      double sy = (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) * 1e3 +
                  (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) / 1e3;
      size_t ls;
      nvrtcGetProgramLogSize(p, &ls);
      std::string log(ls, 0);
      nvrtcGetProgramLog(p, &log[0]);
      if (rc != NVRTC_SUCCESS || r == 0)
        fprintf(stderr, "%s\n", log.c_str());
      printf("%.1f ms user %.0f sys %.0f minflt %ld maxrss %ldMB\n",
             std::chrono::duration<double, std::milli>(t1 - t0).count(), us, sy,
             u1.ru_minflt - u0.ru_minflt, u1.ru_maxrss / 1024);
      if (out && r == 0) {
        size_t n;
        nvrtcGetCUBINSize(p, &n);
        std::string b(n, 0);
        nvrtcGetCUBIN(p, &b[0]);
        std::ofstream(out, std::ios::binary) << b;
      }
      nvrtcDestroyProgram(&p);
    }
  }
}
