//===- Recipes.cpp - The recipe vocabulary as Python objects --------------===//
//
// Granularity, Scaling, QuantRecipe and Recipe wrap core/Recipe.h's types;
// each is checked when it is built (core/RecipeRules.h) and prints as the
// fp8 dialect spells it (core/RecipeSpelling.h), so what a user prints can be
// pasted into an annotated model.
//
//===----------------------------------------------------------------------===//

#include "python/src/Recipes.h"
#include "python/src/Bindings.h"

#include "core/RecipePresets.h"
#include "core/RecipeRules.h"
#include "core/RecipeSpelling.h"
#include "runtime/Quantize.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <functional>

namespace nb = nanobind;

namespace fp8::python {

namespace {

[[noreturn]] void refuse(const char *what, const std::string &message) {
  throw nb::value_error(
      (std::string("fp8kit.") + what + ": " + message).c_str());
}

void check(const Status &s, const char *what) {
  if (!s)
    refuse(what, s.message());
}

template <typename T>
T parseEnum(std::optional<T> v, const char *what, const char *field,
            const char *expected, const std::string &found) {
  if (!v)
    refuse(what, std::string("expected ") + field + " to be " + expected +
                     ", found '" + found + "'");
  return *v;
}

std::optional<int64_t> blockOf(int64_t v) {
  if (v == Granularity::kWhole)
    return std::nullopt;
  return v;
}

Granularity makeGranularity(std::optional<int64_t> rows,
                            std::optional<int64_t> cols,
                            const std::string &scale) {
  for (const std::optional<int64_t> &d : {rows, cols})
    if (d && *d <= 0)
      refuse("Granularity",
             "expected a positive block size or None (the whole dimension), "
             "found " +
                 std::to_string(*d));
  Granularity g;
  g.rows = rows.value_or(Granularity::kWhole);
  g.cols = cols.value_or(Granularity::kWhole);
  g.scale = parseEnum(parseScaleFormat(scale), "Granularity", "scale",
                      "f32, f32_pow2 or ue8m0", scale);
  check(checkGranularity(g, "the granularity"), "Granularity");
  return g;
}

size_t hashOf(const std::string &s) { return std::hash<std::string>()(s); }

} // namespace

Granularity toGranularity(nb::handle h, const char *what) {
  if (nb::isinstance<Granularity>(h))
    return nb::cast<Granularity>(h);
  if (nb::isinstance<nb::str>(h)) {
    const std::string s = nb::cast<std::string>(h);
    Expected<Granularity> g = parseGranularity(s);
    if (!g)
      refuse(what, g.message());
    check(checkGranularity(*g, "the granularity"), what);
    return *g;
  }
  refuse(what, "expected a granularity (fp8kit.Granularity or its name, "
               "'1x128'), found " +
                   nb::cast<std::string>(nb::str(nb::type_name(h.type()))));
}

ScalingSpec toScaling(nb::handle h, const char *what) {
  if (h.is_none())
    return {};
  if (nb::isinstance<ScalingSpec>(h))
    return nb::cast<ScalingSpec>(h);
  if (nb::isinstance<nb::str>(h)) {
    const std::string s = nb::cast<std::string>(h);
    return {parseEnum(parseScalingMode(s), what, "scaling",
                      "'current' or 'delayed'", s),
            {}};
  }
  refuse(what, "expected a scaling (fp8kit.Scaling, 'current' or "
               "'delayed'), found " +
                   nb::cast<std::string>(nb::str(nb::type_name(h.type()))));
}

QuantRecipe toQuantRecipe(nb::handle h, const char *what) {
  if (nb::isinstance<QuantRecipe>(h))
    return nb::cast<QuantRecipe>(h);
  QuantRecipe q; // a granularity alone: E4M3, current scaling
  q.granularity = toGranularity(h, what);
  return q;
}

DType parseFormat(const std::string &s, const char *what) {
  DType t = parseEnum(parseDType(s), what, "the format", "e4m3fn or e5m2", s);
  if (!isFP8(t))
    refuse(what, "expected the format to be e4m3fn or e5m2, found '" + s + "'");
  return t;
}

namespace {

void bindGranularity(nb::module_ &m) {
  nb::class_<Granularity>(
      m, "Granularity",
      "One scale per block of rows x cols elements of a tensor as stored "
      "(None: the whole dimension), and the scales' format.")
      .def(
          "__init__",
          [](Granularity *self, std::optional<int64_t> rows,
             std::optional<int64_t> cols, const std::string &scale) {
            new (self) Granularity(makeGranularity(rows, cols, scale));
          },
          nb::arg("rows").none(), nb::arg("cols").none(),
          nb::arg("scale") = "f32")
      .def_static(
          "parse", [](nb::handle s) { return toGranularity(s, "Granularity"); },
          nb::arg("name"),
          "From its name: 'per_tensor', 'per_row', '1x128', "
          "'128x128:f32_pow2', "
          "'mx', ...")
      .def_static(
          "per_tensor",
          [](const std::string &s) { return makeGranularity({}, {}, s); },
          nb::arg("scale") = "f32")
      .def_static(
          "per_row",
          [](const std::string &s) { return makeGranularity(1, {}, s); },
          nb::arg("scale") = "f32")
      .def_static(
          "per_column",
          [](const std::string &s) { return makeGranularity({}, 1, s); },
          nb::arg("scale") = "f32")
      .def_static("mx", [] { return Granularity::mx(); })
      .def_prop_ro("rows", [](const Granularity &g) { return blockOf(g.rows); })
      .def_prop_ro("cols", [](const Granularity &g) { return blockOf(g.cols); })
      .def_prop_ro(
          "scale",
          [](const Granularity &g) { return std::string(toString(g.scale)); })
      .def_prop_ro(
          "name", [](const Granularity &g) { return toString(g); },
          "The short spelling: '1x128', 'per_row:f32_pow2'.")
      .def(
          "scale_shape",
          [](const Granularity &g, int64_t rows, int64_t cols) {
            if (rows < 0 || cols < 0)
              refuse("Granularity.scale_shape",
                     "expected a non-negative shape, found (" +
                         std::to_string(rows) + ", " + std::to_string(cols) +
                         ")");
            return std::make_tuple(g.scaleRows(rows), g.scaleCols(cols));
          },
          nb::arg("rows"), nb::arg("cols"),
          "The shape of the scales of a [rows, cols] tensor.")
      .def("__str__", [](const Granularity &g) { return dialectSpelling(g); })
      .def("__repr__", [](const Granularity &g) { return dialectSpelling(g); })
      .def("__eq__",
           [](const Granularity &a, const Granularity &b) { return a == b; })
      .def("__hash__",
           [](const Granularity &g) { return hashOf(dialectSpelling(g)); });
}

void bindScaling(nb::module_ &m) {
  nb::class_<ScalingSpec>(
      m, "Scaling",
      "Current scaling (the amax of the block now) or delayed scaling (the "
      "amax read off a history of earlier steps; per-tensor only).")
      .def(
          "__init__",
          [](ScalingSpec *self, const std::string &mode, int64_t history,
             int64_t interval, int64_t margin, const std::string &algo) {
            ScalingSpec s;
            s.mode = parseEnum(parseScalingMode(mode), "Scaling", "mode",
                               "'current' or 'delayed'", mode);
            s.delayed = {history, interval, margin,
                         parseEnum(parseAmaxAlgo(algo), "Scaling", "algo",
                                   "'max' or 'most_recent'", algo)};
            if (s.mode == ScalingMode::Delayed)
              check(checkDelayedScaling(s.delayed), "Scaling");
            new (self) ScalingSpec(s);
          },
          nb::arg("mode") = "current", nb::arg("history") = 16,
          nb::arg("interval") = 1, nb::arg("margin") = 0,
          nb::arg("algo") = "max")
      .def_prop_ro(
          "mode",
          [](const ScalingSpec &s) { return std::string(toString(s.mode)); })
      .def_prop_ro("history",
                   [](const ScalingSpec &s) { return s.delayed.historyLength; })
      .def_prop_ro(
          "interval",
          [](const ScalingSpec &s) { return s.delayed.updateInterval; })
      .def_prop_ro("margin",
                   [](const ScalingSpec &s) { return s.delayed.margin; })
      .def_prop_ro("algo",
                   [](const ScalingSpec &s) {
                     return std::string(toString(s.delayed.algo));
                   })
      .def("__str__", [](const ScalingSpec &s) { return s.spelling(); })
      .def("__repr__", [](const ScalingSpec &s) { return s.spelling(); })
      .def("__eq__",
           [](const ScalingSpec &a, const ScalingSpec &b) {
             return a.spelling() == b.spelling();
           })
      .def("__hash__",
           [](const ScalingSpec &s) { return hashOf(s.spelling()); });
}

void bindQuantRecipe(nb::module_ &m) {
  nb::class_<QuantRecipe>(
      m, "QuantRecipe",
      "How one tensor is quantized: an FP8 format, a granularity, a scaling.")
      .def(
          "__init__",
          [](QuantRecipe *self, const std::string &format,
             nb::handle granularity, nb::handle scaling) {
            QuantRecipe q;
            q.format = parseFormat(format, "QuantRecipe");
            q.granularity = toGranularity(granularity, "QuantRecipe");
            const ScalingSpec s = toScaling(scaling, "QuantRecipe");
            q.mode = s.mode;
            q.delayed = s.delayed;
            check(checkQuantRecipe(q, "the tensor"), "QuantRecipe");
            new (self) QuantRecipe(q);
          },
          nb::arg("format") = "e4m3fn", nb::arg("granularity") = "1x128",
          nb::arg("scaling") = nb::none())
      .def_prop_ro(
          "format",
          [](const QuantRecipe &q) { return std::string(toString(q.format)); })
      .def_prop_ro("granularity",
                   [](const QuantRecipe &q) { return q.granularity; })
      .def_prop_ro(
          "scaling",
          [](const QuantRecipe &q) { return ScalingSpec{q.mode, q.delayed}; })
      .def_prop_ro(
          "history_bytes",
          [](const QuantRecipe &q) -> std::optional<int64_t> {
            if (q.mode != ScalingMode::Delayed)
              return std::nullopt;
            return amaxHistoryBytes(q.delayed.historyLength);
          },
          "Delayed scaling: the bytes of its amax history state (a uint8 "
          "tensor of this size, zeroed before the first call); else None.")
      .def_prop_ro(
          "writes_transposed",
          [](const QuantRecipe &q) { return quantizeWritesTransposed(q); },
          "Whether fp8kit.quantize(..., transposed=True) takes this recipe: "
          "one pass writes the codes and scales transposed (R x 1 blocks "
          "with current scaling); else quantize, then transpose.")
      .def("__str__", [](const QuantRecipe &q) { return dialectSpelling(q); })
      .def("__repr__", [](const QuantRecipe &q) { return dialectSpelling(q); })
      .def("__eq__",
           [](const QuantRecipe &a, const QuantRecipe &b) {
             return dialectSpelling(a) == dialectSpelling(b);
           })
      .def("__hash__",
           [](const QuantRecipe &q) { return hashOf(dialectSpelling(q)); });
}

void bindMatmulRecipe(nb::module_ &m) {
  nb::class_<MatmulRecipe>(
      m, "Recipe",
      "The recipe of one GEMM D = A B^T, as #fp8.recipe states it: how A "
      "[M, K] and B [N, K] are quantized, the promotion interval (None: "
      "tensor-core accumulation only) and the result type.")
      .def(
          "__init__",
          [](MatmulRecipe *self, nb::handle a, nb::handle b,
             std::optional<int64_t> promotionInterval, const std::string &out) {
            MatmulRecipe r;
            r.a = toQuantRecipe(a, "Recipe");
            r.b = toQuantRecipe(b, "Recipe");
            r.promotionInterval = promotionInterval;
            r.out = parseEnum(parseDType(out), "Recipe", "out",
                              "'bf16' or 'f32'", out);
            check(checkMatmulRecipe(r), "Recipe");
            new (self) MatmulRecipe(r);
          },
          nb::arg("a") = "1x128", nb::arg("b") = "128x128",
          nb::arg("promotion_interval").none() = 128, nb::arg("out") = "bf16")
      .def_static(
          "preset",
          [](const std::string &name, const std::string &arch) {
            Arch target = parseEnum(parseArch(arch), "Recipe.preset", "arch",
                                    "'sm_90a' or 'sm_100a'", arch);
            std::optional<RecipePreset> p = findRecipePreset(name, target);
            if (!p)
              refuse("Recipe.preset", "expected a recipe named " +
                                          recipePresetNames() + ", found '" +
                                          name + "'");
            MatmulRecipe r;
            r.a.granularity = p->a;
            r.b.granularity = p->b;
            r.promotionInterval = p->promotionInterval;
            return r;
          },
          nb::arg("name"), nb::arg("arch") = "sm_90a")
      .def_prop_ro("a", [](const MatmulRecipe &r) { return r.a; })
      .def_prop_ro("b", [](const MatmulRecipe &r) { return r.b; })
      .def_prop_ro("promotion_interval",
                   [](const MatmulRecipe &r) { return r.promotionInterval; })
      .def_prop_ro(
          "out",
          [](const MatmulRecipe &r) { return std::string(toString(r.out)); })
      .def("__str__", [](const MatmulRecipe &r) { return dialectSpelling(r); })
      .def("__repr__", [](const MatmulRecipe &r) { return dialectSpelling(r); })
      .def("__eq__",
           [](const MatmulRecipe &a, const MatmulRecipe &b) {
             return dialectSpelling(a) == dialectSpelling(b);
           })
      .def("__hash__",
           [](const MatmulRecipe &r) { return hashOf(dialectSpelling(r)); });
}

} // namespace

void bindRecipes(nb::module_ &m) {
  bindGranularity(m);
  bindScaling(m);
  bindQuantRecipe(m);
  bindMatmulRecipe(m);
}

} // namespace fp8::python
