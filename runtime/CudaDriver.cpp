//===- CudaDriver.cpp - The CUDA driver API, loaded at first use ----------===//

#include "runtime/CudaDriver.h"
#include "core/Env.h"
#include "runtime/Nvrtc.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <string_view>
#include <type_traits>

#include <chrono>
#include <thread>

#include <mutex>

namespace fp8 {

namespace {
/// The CUDA version whose ABI matches cuda.h's plain declaration of `name`.
// NOTE: cuGetProcAddress returns the newest ABI of a symbol up to the
// version asked for. CUDA 13.0 gave cuCtxSynchronize a new ABI taking a
// CUcontext (PFN_cuCtxSynchronize_v13000), while cuda.h's cuCtxSynchronize
// is still the (void) one: asking with CUDA_VERSION returned the new entry
// point, which read a garbage context and failed with
// CUDA_ERROR_CONTEXT_IS_DESTROYED on our H100. Entry points whose plain
// declaration is older than CUDA_VERSION's ABI are listed here.
int abiVersion(const char *name) {
  if (std::string_view(name) == "cuCtxSynchronize")
    return 12090;
  return CUDA_VERSION;
}
static_assert(
    std::is_same_v<decltype(&::cuCtxSynchronize), PFN_cuCtxSynchronize_v2000>,
    "cuda.h's cuCtxSynchronize changed ABI: update abiVersion()");

using GetProcAddressFn = CUresult (*)(const char *, void **, int, cuuint64_t,
                                      CUdriverProcAddressQueryResult *);

Expected<const CudaDriver *> loadDriver() {
  disableNvrtcCache(); // read when the driver loads
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return errorf("no CUDA driver found: libcuda.so.1 could not be loaded (",
                  dlerror(),
                  "); this machine has no NVIDIA GPU driver. Code "
                  "generation and NVRTC compilation work without one; "
                  "running kernels needs a GPU");
  auto getProc =
      reinterpret_cast<GetProcAddressFn>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!getProc)
    return errorf("the CUDA driver is too old: cuGetProcAddress_v2 is missing "
                  "(expected a driver for CUDA >= 12.0)");
  static CudaDriver d;
#define FP8_RESOLVE_FN(name)                                                   \
  {                                                                            \
    void *fn = nullptr;                                                        \
    CUdriverProcAddressQueryResult q;                                          \
    CUresult r = getProc(#name, &fn, abiVersion(#name),                        \
                         CU_GET_PROC_ADDRESS_DEFAULT, &q);                     \
    if (r != CUDA_SUCCESS || !fn)                                              \
      return errorf("the CUDA driver lacks ", #name,                           \
                    " (driver too old for CUDA ", CUDA_VERSION / 1000, ".",    \
                    (CUDA_VERSION % 1000) / 10, "?)");                         \
    d.name = reinterpret_cast<decltype(d.name)>(fn);                           \
  }
  FP8_CUDA_DRIVER_FUNCTIONS(FP8_RESOLVE_FN)
#undef FP8_RESOLVE_FN
  CUresult r = d.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char *msg = nullptr;
    d.cuGetErrorString(r, &msg);
    return errorf("no usable CUDA device: cuInit failed (",
                  msg ? msg : "unknown error", ")");
  }
  return static_cast<const CudaDriver *>(&d);
}
} // namespace

Expected<const CudaDriver *> CudaDriver::get() {
  static Expected<const CudaDriver *> driver = loadDriver();
  return driver;
}

Status cuCheck(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS)
    return Status::ok();
  auto d = CudaDriver::get();
  const char *name = nullptr, *msg = nullptr;
  if (d) {
    (*d)->cuGetErrorName(r, &name);
    (*d)->cuGetErrorString(r, &msg);
  }
  std::string code = name ? name : "CUresult " + std::to_string(int(r));
  std::string detail = msg ? std::string(" (") + msg + ")" : "";
  return errorf(what, " failed: ", code, detail);
}

namespace {
Expected<const CudaDevice *> openDevice() {
  FP8_RETURN_IF_ERROR(env::checkEnvironment());
  auto drv = CudaDriver::get();
  if (!drv)
    return drv.status();
  const CudaDriver &d = **drv;
  static CudaDevice dev;
  dev.driver = &d;
  int count = 0;
  FP8_RETURN_IF_ERROR(cuCheck(d.cuDeviceGetCount(&count), "cuDeviceGetCount"));
  dev.ordinal = env::deviceOrdinal();
  if (count == 0)
    return errorf("no CUDA device found (the driver reports 0 devices)");
  if (dev.ordinal < 0 || dev.ordinal >= count)
    return errorf("expected FP8_DEVICE in [0, ", count - 1, "], found ",
                  dev.ordinal);
  FP8_RETURN_IF_ERROR(
      cuCheck(d.cuDeviceGet(&dev.device, dev.ordinal), "cuDeviceGet"));
  char name[256] = {0};
  d.cuDeviceGetName(name, sizeof(name), dev.device);
  dev.name = name;
  auto attr = [&](CUdevice_attribute a, int &out) {
    return cuCheck(d.cuDeviceGetAttribute(&out, a, dev.device),
                   "cuDeviceGetAttribute");
  };
  FP8_RETURN_IF_ERROR(
      attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev.smCount));
  FP8_RETURN_IF_ERROR(
      attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev.ccMajor));
  FP8_RETURN_IF_ERROR(
      attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev.ccMinor));
  FP8_RETURN_IF_ERROR(
      attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
           dev.maxSharedPerBlockOptin));
  FP8_RETURN_IF_ERROR(
      cuCheck(d.cuDevicePrimaryCtxRetain(&dev.context, dev.device),
              "cuDevicePrimaryCtxRetain"));
  return static_cast<const CudaDevice *>(&dev);
}
} // namespace

Expected<const CudaDevice *> CudaDevice::get() {
  static Expected<const CudaDevice *> dev = openDevice();
  if (dev)
    FP8_RETURN_IF_ERROR(cuCheck(
        (*dev)->driver->cuCtxSetCurrent((*dev)->context), "cuCtxSetCurrent"));
  return dev;
}

Status waitStream(CUstream stream, double timeoutSeconds,
                  const std::string &what) {
  auto dev = CudaDevice::get();
  if (!dev)
    return dev.status();
  const CudaDriver &d = *(*dev)->driver;
  CUevent ev;
  FP8_RETURN_IF_ERROR(
      cuCheck(d.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate"));
  Status s = cuCheck(d.cuEventRecord(ev, stream), "cuEventRecord");
  auto start = std::chrono::steady_clock::now();
  while (s.isOk()) {
    CUresult r = d.cuEventQuery(ev);
    if (r == CUDA_SUCCESS)
      break;
    if (r != CUDA_ERROR_NOT_READY) {
      s = cuCheck(r, what.c_str());
      break;
    }
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (waited > timeoutSeconds) {
      // The event is leaked on purpose: the stream is stuck.
      return errorf(what, " did not finish within ", timeoutSeconds,
                    " s: the kernel is probably deadlocked (rerun with "
                    "FP8_KERNEL_DEBUG=1 to name the stuck barrier)");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  d.cuEventDestroy(ev);
  return s;
}

} // namespace fp8
