//===- PlanGraph.cpp - A plan's run phase as one CUDA graph ---------------===//
//
// A decode step (M of 1 to 128) runs kernels of a few microseconds each, so
// launching them one by one costs about as much as running them. The run
// phase is captured once into a CUDA graph (stream capture of the very
// launches GpuPlan::run makes) and each later run is one cuGraphLaunch.
// The capture is relaxed: the launches query the driver (attributes,
// pointer extents) but never synchronize or allocate.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanExecutor.h"

#include "runtime/KernelTiming.h"

namespace fp8 {

Status GpuPlan::captureRun() {
  const CudaDriver &d = *device_->driver;
  if (graph_)
    return Status::ok();
  FP8_RETURN_IF_ERROR(
      cuCheck(d.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_RELAXED),
              "cuStreamBeginCapture"));
  Status launched;
  for (size_t i = 0; i < plan_.steps.size() && launched.isOk(); ++i)
    if (plan_.steps[i].phase == Phase::Run)
      launched = launch(i).withContext("capturing the run phase");
  // End the capture whatever happened, so the stream is usable again.
  CUgraph graph = nullptr;
  Status ended =
      cuCheck(d.cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture");
  FP8_RETURN_IF_ERROR(launched);
  FP8_RETURN_IF_ERROR(ended);
  Status made = cuCheck(d.cuGraphInstantiateWithFlags(&graph_, graph, 0),
                        "cuGraphInstantiateWithFlags");
  d.cuGraphDestroy(graph);
  if (!made.isOk())
    graph_ = nullptr;
  return made;
}

Status GpuPlan::launchGraph() {
  if (!graph_)
    return errorf("the run phase has no graph: capture it first");
  return cuCheck(device_->driver->cuGraphLaunch(graph_, stream_),
                 "cuGraphLaunch");
}

Expected<std::vector<double>> GpuPlan::timeGraph(int warmup, int iters) {
  return timeQueued(
      *device_->driver, stream_, warmup, iters, [&] { return launchGraph(); },
      [&] { return sync(60, "the timed graph runs"); });
}

} // namespace fp8
