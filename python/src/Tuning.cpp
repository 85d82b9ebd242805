//===- Tuning.cpp - fp8kit's tuning database and tuning on first use ------===//
//
// The tuning database fp8kit's GEMMs and plans take their tiles from
// (codegen/TuningDb.h; fp8-tune writes it), and tuning on first use
// (runtime/Tuner.h): a GEMM the database lacks is measured at its first
// launch.
//
//===----------------------------------------------------------------------===//

#include "python/src/Arrays.h"
#include "python/src/Bindings.h"

#include "runtime/Gemm.h"
#include "runtime/Tuner.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace fp8::python {

void bindTuning(nb::module_ &m) {
  m.def(
      "set_tuning_database",
      [](std::optional<std::string> path) {
        throwIfError(setTuningDatabase(path.value_or("")),
                     "fp8kit.set_tuning_database");
      },
      nb::arg("path").none(),
      "Makes the file at `path` (written by fp8-tune) the tuning database "
      "GEMMs and plans take their tiles from (None: none), instead of "
      "FP8_TUNING_DB's.");
  m.def(
      "tune_on_first_use",
      [](std::optional<std::string> db, int iters, bool fullGrid) {
        if (iters < 1 || iters > 1000)
          throw nb::value_error(("fp8kit.tune_on_first_use: expected iters "
                                 "in [1, 1000], found " +
                                 std::to_string(iters))
                                    .c_str());
        TuneOptions o;
        o.iters = iters;
        if (!fullGrid)
          o.grid = Sm90TileGrid{};
        throwIfError(tuneOnFirstUse(db.value_or(""), o),
                     "fp8kit.tune_on_first_use");
      },
      nb::arg("db").none() = nb::none(), nb::arg("iters") = 20,
      nb::arg("full_grid") = true,
      "From now on a GEMM on CUDA tensors (fp8kit.gemm, a plan's GEMM "
      "steps) whose tile the tuning database lacks for this GPU, recipe, N, "
      "K and M bucket is tuned at its first launch (seconds; the device is "
      "synchronized), as fp8-tune does: `iters` timed runs a candidate, the "
      "full candidate grid or the smaller one. With `db`, that file (if it "
      "exists) becomes the database and each new entry is merged into it; "
      "without, the entries are kept for this process.");
  m.def("stop_tuning_on_first_use", &stopTuningOnFirstUse,
        "Turns tuning on first use off; the tiles tuned so far stay.");
}

} // namespace fp8::python
