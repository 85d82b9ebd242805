//===- PlanInputs.cpp - A plan's inputs and outputs on the host -----------===//
//
// The graph's inputs and weights from .npy files or seeded random values,
// and its outputs written as .npy (runtime/plan/PlanOracle.h declares
// them).
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanOracle.h"

#include "runtime/plan/PlanMoe.h"

#include "numerics/Npy.h"
#include "numerics/Random.h"

#include <cmath>
#include <cstring>
#include <sys/stat.h>

namespace fp8 {

namespace nm = fp8::numerics;

namespace {
uint64_t nameSeed(const std::string &name, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string describe(const HostTensor &t) {
  return std::string(toString(t.dtype)) + " " + formatShape(t.shape);
}

} // namespace

Status fillInputs(const Plan &plan, HostBuffers &buffers,
                  const InputOptions &options) {
  for (const PlanBuffer &b : plan.buffers) {
    if (b.role != BufferRole::Input && b.role != BufferRole::Weight)
      continue;
    HostTensor &t = buffers.at(b.name);
    const int64_t n = t.elements();
    if (options.dir.empty() && !options.arrays) {
      nm::RandomSpec spec;
      spec.seed = nameSeed(b.name, options.seed);
      if (b.role == BufferRole::Weight && !t.shape.empty() &&
          t.shape.back() > 0)
        spec.scale = float(1.0 / std::sqrt(double(t.shape.back())));
      if (t.dtype == DType::I32) {
        FP8_RETURN_IF_ERROR(randomRoutingIds(plan, buffers, b, t, spec.seed));
      } else if (routingReader(plan, b.name, StepKind::Unpermute)) {
        // Routing weights: positive, each token's summing to 1 (a softmax
        // over its experts' scores).
        std::vector<float> v = nm::randomTensor(n, spec);
        const int64_t topK = t.shape.size() == 2 ? t.shape[1] : 1;
        for (int64_t i = 0; i + topK <= n; i += topK) {
          double sum = 0;
          for (int64_t j = 0; j < topK; ++j)
            sum += std::exp(double(v[size_t(i + j)]));
          for (int64_t j = 0; j < topK; ++j)
            t.set(i + j, float(std::exp(double(v[size_t(i + j)])) / sum));
        }
      } else if (t.dtype == DType::BF16) {
        std::vector<uint16_t> v = nm::randomTensorBF16(n, spec);
        std::memcpy(t.data.data(), v.data(), v.size() * 2);
      } else {
        std::vector<float> v = nm::randomTensor(n, spec);
        for (int64_t i = 0; i < n; ++i)
          t.set(i, v[size_t(i)]);
      }
      continue;
    }
    Expected<nm::NpyArray> arr = nm::NpyArray{};
    std::string path;
    if (options.arrays) {
      path = "the array given";
      auto it = options.arrays->find(b.name);
      if (it == options.arrays->end())
        return errorf("missing ", toString(b.role), " '", b.name,
                      "': expected an array (", describe(t), ")");
      arr = it->second;
    } else {
      path = options.dir + "/" + b.name + ".npy";
      struct stat st;
      if (::stat(path.c_str(), &st) != 0)
        return errorf("missing ", toString(b.role), " '", b.name,
                      "': expected ", path, " (", describe(t), ")");
      arr = nm::readNpy(path);
      if (!arr)
        return arr.status();
    }
    if (arr->shape != t.shape)
      return errorf(toString(b.role), " '", b.name, "' (", path,
                    "): expected shape ", formatShape(t.shape), ", found ",
                    formatShape(arr->shape));
    if (t.dtype == DType::I32) {
      if (arr->descr != "<i4")
        return errorf(toString(b.role), " '", b.name, "' (", path,
                      "): expected int32 ('<i4'), found '", arr->descr, "'");
      std::memcpy(t.data.data(), arr->data.data(), t.data.size());
    } else if (t.dtype == DType::BF16) {
      auto v = nm::npyToBF16(*arr);
      if (!v)
        return errorf(toString(b.role), " '", b.name, "' (", path,
                      "): expected bf16 ('<V2', '<u2' or '<f4'), found '",
                      arr->descr, "'");
      std::memcpy(t.data.data(), v->data(), v->size() * 2);
    } else {
      auto v = nm::npyToFloat(*arr, nm::U2As::BF16);
      if (!v || arr->descr == "|u1" || arr->descr == "|i1")
        return errorf(toString(b.role), " '", b.name, "' (", path,
                      "): expected ", toString(t.dtype),
                      " ('<f4', '<f2' or '<f8'), found '", arr->descr, "'");
      for (int64_t i = 0; i < n; ++i)
        t.set(i, (*v)[size_t(i)]);
    }
  }
  return checkRoutingIds(plan, buffers);
}

Status writeTensorNpy(const std::string &dir, const std::string &name,
                      const HostTensor &t) {
  nm::NpyArray a;
  switch (t.dtype) {
  case DType::BF16: {
    std::vector<uint16_t> v(size_t(t.elements()));
    std::memcpy(v.data(), t.data.data(), t.data.size());
    a = nm::npyFromBF16(v.data(), t.shape);
    break;
  }
  case DType::F16:
  case DType::F32: {
    std::vector<float> v = t.toFloat();
    a = nm::npyFromFloat(v.data(), t.shape);
    break;
  }
  case DType::I32:
    a.descr = "<i4";
    a.shape = t.shape;
    a.data = t.data;
    break;
  default:
    a = nm::npyFromBytes(t.data.data(), t.shape);
    break;
  }
  return nm::writeNpy(dir + "/" + name + ".npy", a);
}

} // namespace fp8
