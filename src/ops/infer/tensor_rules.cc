// Inference rules of shape and data-movement ops: Shape, Size, Cast, Reshape, Flatten,
// Squeeze, Unsqueeze, Transpose, Concat, Gather, Slice, Expand, Split, ConstantOfShape,
// Constant, Tile, NonZero, Range.
#include <algorithm>

#include "base/check.h"
#include "ops/broadcast.h"
#include "ops/shape_inference.h"

namespace onyx {
namespace {

using Dims = std::vector<Dim>;
constexpr int64_t kMaxRank = 64;  // a larger rank read from a shape tensor is left unknown

std::optional<Dims> Maybe(const Dims* d) { return d ? std::optional<Dims>(*d) : std::nullopt; }

void ShapeRule(InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  if (!in) return ctx.set_output(0, DataType::kInt64, Dims{Dim{}});
  const int64_t rank = static_cast<int64_t>(in->size());
  int64_t start = ctx.attr_int("start", 0), end = ctx.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  ctx.set_output(0, DataType::kInt64, Dims{Dim{std::max<int64_t>(0, end - start), ""}});
}

void SizeRule(InferenceContext& ctx) { ctx.set_output(0, DataType::kInt64, Dims{}); }

void CastRule(InferenceContext& ctx) {
  const auto to = static_cast<DataType>(ctx.attr_int("to", 0));
  ctx.set_output(0, to, Maybe(ctx.input_dims(0)));
}

void CastLikeRule(InferenceContext& ctx) { ctx.set_output(0, ctx.input_dtype(1), Maybe(ctx.input_dims(0))); }

// A shape value's element as a target dim: a size, a symbol, or unknown.
Dim TargetDim(const Dim& v) {
  auto n = ShapeValueNumber(v);
  if (n) return *n >= 0 ? Dim{*n, ""} : Dim{};
  return v;  // a symbol or unknown
}

// Reshape's -1 when sizes are symbolic: the input dims the other output dims do not account
// for (matching sizes or symbols cancel) must leave one symbol, or known sizes only.
Dim InferredDim(const Dims& in, const Dims& out, size_t infer_at) {
  std::vector<Dim> rest;
  for (const Dim& d : in)
    if (!(d.known() && d.value == 1)) rest.push_back(d);
  int64_t unmatched = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    const Dim& d = out[i];
    if (i == infer_at || (d.known() && d.value == 1)) continue;
    auto it = std::find_if(rest.begin(), rest.end(), [&](const Dim& r) {
      return d.known() ? r.known() && r.value == d.value : !d.param.empty() && r.param == d.param;
    });
    if (it != rest.end()) rest.erase(it);
    else if (d.known()) {
      const auto p = MulDims(unmatched, d.value);
      if (!p) return Dim{};
      unmatched = *p;
    } else {
      return Dim{};
    }
  }
  int64_t known = 1;
  std::vector<Dim> symbols;
  for (const Dim& r : rest) {
    if (r.known()) {
      const auto p = MulDims(known, r.value);
      if (!p) return Dim{};
      known = *p;
    } else if (!r.param.empty()) symbols.push_back(r);
    else return Dim{};
  }
  if (symbols.empty()) return unmatched > 0 && known % unmatched == 0 ? Dim{known / unmatched, ""} : Dim{};
  if (symbols.size() == 1 && known == unmatched) return symbols[0];
  return Dim{};
}

// Reshape whose shape is computed (not constant) but whose elements are known as dims.
bool ReshapeFromValues(InferenceContext& ctx) {
  auto values = InputShapeValues(ctx, 1);
  if (!values) return false;
  const Dims* in = ctx.input_dims(0);
  const bool allow_zero = ctx.attr_int("allowzero", 0) != 0;
  Dims out;
  std::optional<size_t> infer_at;
  for (size_t i = 0; i < values->size(); ++i) {
    auto n = ShapeValueNumber((*values)[i]);
    if (n && *n == 0 && !allow_zero) {
      out.push_back(in && i < in->size() ? (*in)[i] : Dim{});
    } else if (n && *n == -1) {
      infer_at = i;
      out.push_back(Dim{});
    } else {
      out.push_back(TargetDim((*values)[i]));
    }
  }
  if (infer_at && in) out[*infer_at] = InferredDim(*in, out, *infer_at);
  ctx.set_output(0, ctx.input_dtype(0), out);
  return true;
}

void ReshapeRule(InferenceContext& ctx) {
  const DataType dt = ctx.input_dtype(0);
  std::optional<std::vector<int64_t>> shape =
      ctx.opset() < 5 ? std::optional<std::vector<int64_t>>(ctx.attr_ints("shape")) : ctx.constant_ints(1);
  if (!shape) {
    if (ctx.opset() >= 5 && ReshapeFromValues(ctx)) return;
    // Rank is the shape input's length when that is known.
    const Dims* s = ctx.input_dims(1);
    if (s && s->size() == 1 && (*s)[0].known() && (*s)[0].value <= kMaxRank)
      return ctx.set_output(0, dt, Dims(static_cast<size_t>((*s)[0].value)));
    return ctx.set_output(0, dt, std::nullopt);
  }
  const Dims* in = ctx.input_dims(0);
  const bool allow_zero = ctx.attr_int("allowzero", 0) != 0;
  Dims out;
  int infer_at = -1;
  for (size_t i = 0; i < shape->size(); ++i) {
    const int64_t v = (*shape)[i];
    if (v == 0 && !allow_zero) {
      out.push_back(in && i < in->size() ? (*in)[i] : Dim{});
    } else if (v == -1) {
      infer_at = static_cast<int>(i);
      out.push_back(Dim{});
    } else {
      out.push_back(Dim{v, ""});
    }
  }
  if (infer_at >= 0 && in) {
    int64_t total = 1, known_out = 1;
    bool all_known = true;
    for (const auto& d : *in) {
      const auto p = d.known() ? MulDims(total, d.value) : std::nullopt;
      if (p) total = *p;
      else all_known = false;
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (static_cast<int>(i) == infer_at) continue;
      const auto p = out[i].known() ? MulDims(known_out, out[i].value) : std::nullopt;
      if (p) known_out = *p;
      else all_known = false;
    }
    if (all_known && known_out > 0) out[infer_at] = Dim{total / known_out, ""};
    else out[infer_at] = InferredDim(*in, out, static_cast<size_t>(infer_at));
  }
  ctx.set_output(0, dt, out);
}

void FlattenRule(InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  if (!in) return ctx.set_output(0, ctx.input_dtype(0), Dims(2));
  const int64_t rank = static_cast<int64_t>(in->size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  ONYX_CHECK(axis >= 0 && axis <= rank, kRuntime, "Flatten axis ", ctx.attr_int("axis", 1), " is out of range for rank ", rank);
  auto product = [&](int64_t b, int64_t e) {
    int64_t p = 1;
    for (int64_t i = b; i < e; ++i) {
      const auto q = (*in)[i].known() ? MulDims(p, (*in)[i].value) : std::nullopt;
      if (!q) return Dim{};
      p = *q;
    }
    return Dim{p, ""};
  };
  ctx.set_output(0, ctx.input_dtype(0), Dims{product(0, axis), product(axis, rank)});
}

std::optional<std::vector<int64_t>> AxesOf(InferenceContext& ctx, int input_since_opset, size_t input_index) {
  if (ctx.opset() >= input_since_opset) {
    if (!ctx.has_input(input_index)) return std::vector<int64_t>{};
    return ctx.constant_ints(input_index);
  }
  return ctx.attr_ints("axes");
}

void SqueezeRule(InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  auto axes = AxesOf(ctx, 13, 1);
  if (!in || !axes) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  const int64_t rank = static_cast<int64_t>(in->size());
  Dims out;
  for (int64_t i = 0; i < rank; ++i) {
    bool drop;
    if (axes->empty()) {
      if (!(*in)[i].known()) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
      drop = (*in)[i].value == 1;
    } else {
      drop = std::any_of(axes->begin(), axes->end(), [&](int64_t a) { return NormalizeAxis(a, rank) == i; });
    }
    if (!drop) out.push_back((*in)[i]);
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void UnsqueezeRule(InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  auto axes = AxesOf(ctx, 13, 1);
  if (!in || !axes) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  const int64_t rank = static_cast<int64_t>(in->size() + axes->size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : *axes) {
    const int64_t axis = NormalizeAxis(a, rank);
    ONYX_CHECK(!inserted[axis], kRuntime, "Unsqueeze axis ", a, " is repeated");
    inserted[axis] = true;
  }
  Dims out;
  size_t k = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? Dim{1, ""} : (*in)[k++]);
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void TransposeRule(InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  if (!in) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  std::vector<int64_t> perm = ctx.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = static_cast<int64_t>(in->size()) - 1; i >= 0; --i) perm.push_back(i);
  if (perm.size() != in->size()) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  Dims out;
  for (int64_t p : perm) out.push_back((*in)[NormalizeAxis(p, static_cast<int64_t>(in->size()))]);
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void ConcatRule(InferenceContext& ctx) {
  const Dims* first = ctx.input_dims(0);
  if (!first || first->empty()) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  Dims out = *first;
  const int64_t axis = NormalizeAxis(ctx.attr_int("axis", 0), static_cast<int64_t>(out.size()));
  int64_t total = 0;
  bool known = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Dims* d = ctx.input_dims(i);
    // Inputs of another rank are an error the kernel reports; the sum is then unknown.
    if (!d || d->size() != out.size() || !(*d)[axis].known() || __builtin_add_overflow(total, (*d)[axis].value, &total))
      known = false;
  }
  out[axis] = known ? Dim{total, ""} : Dim{};
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void GatherRule(InferenceContext& ctx) {
  const Dims* data = ctx.input_dims(0);
  const Dims* indices = ctx.input_dims(1);
  if (!data || !indices || data->empty()) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  const int64_t axis = NormalizeAxis(ctx.attr_int("axis", 0), static_cast<int64_t>(data->size()));
  Dims out(data->begin(), data->begin() + axis);
  out.insert(out.end(), indices->begin(), indices->end());
  out.insert(out.end(), data->begin() + axis + 1, data->end());
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void SliceRule(InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  if (!in) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  const int64_t rank = static_cast<int64_t>(in->size());
  auto [starts, ends, axes, steps] = ReadSliceArgs(ctx);
  Dims out = *in;
  const bool steps_known = ctx.opset() < 10 || steps.has_value();
  if (!starts || !ends || !axes || !steps_known) {
    for (auto& d : out) d = Dim{};
    return ctx.set_output(0, ctx.input_dtype(0), out);
  }
  const size_t n_axes = starts->size();
  if (ends->size() != n_axes || (!axes->empty() && axes->size() != n_axes) ||
      (steps && !steps->empty() && steps->size() != n_axes) || (axes->empty() && static_cast<int64_t>(n_axes) > rank)) {
    for (auto& d : out) d = Dim{};  // the kernel reports the mismatch
    return ctx.set_output(0, ctx.input_dtype(0), out);
  }
  for (size_t i = 0; i < n_axes; ++i) {
    const int64_t axis = axes->empty() ? static_cast<int64_t>(i) : NormalizeAxis((*axes)[i], rank);
    const int64_t step = steps && !steps->empty() ? (*steps)[i] : 1;
    if (axis >= rank) continue;  // axis 0 of a scalar: nothing to slice, the kernel reports it
    if (!(*in)[axis].known() || step == 0) {
      out[axis] = Dim{};
      continue;
    }
    const int64_t dim = (*in)[axis].value;
    auto clampi = [&](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); };
    int64_t s = (*starts)[i], e = (*ends)[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t n;
    if (step > 0) {
      s = clampi(s, 0, dim);
      e = clampi(e, 0, dim);
      n = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = clampi(s, -1, dim - 1);
      e = clampi(e, -1, dim - 1);
      n = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    out[axis] = Dim{n, ""};
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void ExpandRule(InferenceContext& ctx) {
  auto shape = ctx.constant_ints(1);
  if (!shape) {
    auto values = InputShapeValues(ctx, 1);
    if (!values) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
    Dims target;
    for (const Dim& v : *values) target.push_back(TargetDim(v));
    return ctx.set_output(0, ctx.input_dtype(0), BroadcastDims({ctx.input_dims(0), &target}));
  }
  const Dims target = KnownDims(*shape);
  ctx.set_output(0, ctx.input_dtype(0), BroadcastDims({ctx.input_dims(0), &target}));
}

void ConstantOfShapeRule(InferenceContext& ctx) {
  const ir::Attribute* value = ctx.node().FindAttribute("value");
  const DataType dt = value && value->t.defined() ? value->t.dtype() : DataType::kFloat;
  auto shape = ctx.constant_ints(0);
  if (!shape) {
    if (auto values = InputShapeValues(ctx, 0)) {
      Dims dims;
      for (const Dim& v : *values) dims.push_back(TargetDim(v));
      return ctx.set_output(0, dt, dims);
    }
  }
  ctx.set_output(0, dt, shape ? std::optional<Dims>(KnownDims(*shape)) : std::nullopt);
}

void ConstantRule(InferenceContext& ctx) {
  const ir::Attribute* value = ctx.node().FindAttribute("value");
  if (value && value->t.defined()) ctx.set_output(0, value->t.dtype(), KnownDims(value->t.shape()));
}

void SplitRule(InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  const DataType dt = ctx.input_dtype(0);
  if (!in || in->empty()) return;
  const int64_t axis = NormalizeAxis(ctx.attr_int("axis", 0), static_cast<int64_t>(in->size()));
  // Split sizes: an input from opset 13 (absent = even split), an attribute before.
  const bool sizes_given = ctx.opset() >= 13 ? ctx.has_input(1) : ctx.has_attr("split");
  std::optional<std::vector<int64_t>> sizes = ctx.opset() >= 13 ? ctx.constant_ints(1) : ctx.attr_ints("split");
  const size_t n = ctx.num_outputs();
  for (size_t i = 0; i < n; ++i) {
    Dims out = *in;
    if (sizes_given && !(sizes && sizes->size() == n)) {
      out[axis] = Dim{};  // sizes computed at run time
    } else if (sizes_given) {
      out[axis] = Dim{(*sizes)[i], ""};
    } else if ((*in)[axis].known()) {
      const int64_t total = (*in)[axis].value;
      const int64_t parts = static_cast<int64_t>(n);
      const int64_t chunk = total / parts + (total % parts != 0);  // ceil without overflowing
      const __int128 left = static_cast<__int128>(total) - static_cast<__int128>(chunk) * static_cast<int64_t>(i);
      out[axis] = left < 0 ? Dim{} : Dim{left < chunk ? static_cast<int64_t>(left) : chunk, ""};
    } else {
      out[axis] = Dim{};
    }
    ctx.set_output(i, dt, out);
  }
}

void TileRule(InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  auto repeats = ctx.constant_ints(1);
  if (!in) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  Dims out = *in;
  if (repeats && repeats->size() != out.size()) repeats.reset();  // the kernel reports it
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = repeats && out[i].known() ? Dim{MulDims(out[i].value, (*repeats)[i]).value_or(-1), ""} : Dim{};
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void NonZeroRule(InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  ctx.set_output(0, DataType::kInt64, in ? std::optional<Dims>(Dims{Dim{static_cast<int64_t>(in->size()), ""}, Dim{}})
                                         : std::optional<Dims>(Dims(2)));
}

// Range's length: from integer values, or the limit's symbol for Range(0, n, 1).
void RangeRule(InferenceContext& ctx) {
  Dim length;
  auto start = InputShapeValues(ctx, 0), limit = InputShapeValues(ctx, 1), delta = InputShapeValues(ctx, 2);
  if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1) {
    auto s = ShapeValueNumber((*start)[0]), l = ShapeValueNumber((*limit)[0]), d = ShapeValueNumber((*delta)[0]);
    if (s && l && d && *d != 0) {
      const int64_t n = (*l - *s + *d + (*d > 0 ? -1 : 1)) / *d;
      length = Dim{std::max<int64_t>(n, 0), ""};
    } else if (s == 0 && d == 1 && !(*limit)[0].param.empty() && (*limit)[0].param[0] != '#') {
      length = (*limit)[0];
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), Dims{length});
}

struct Registrations {
  Registrations() {
    RegisterInferenceRule("", "Shape", ShapeRule);
    RegisterInferenceRule("", "Size", SizeRule);
    RegisterInferenceRule("", "Cast", CastRule);
    RegisterInferenceRule("", "CastLike", CastLikeRule);
    RegisterInferenceRule("", "Reshape", ReshapeRule);
    RegisterInferenceRule("", "Flatten", FlattenRule);
    RegisterInferenceRule("", "Squeeze", SqueezeRule);
    RegisterInferenceRule("", "Unsqueeze", UnsqueezeRule);
    RegisterInferenceRule("", "Transpose", TransposeRule);
    RegisterInferenceRule("", "Concat", ConcatRule);
    RegisterInferenceRule("", "Gather", GatherRule);
    RegisterInferenceRule("", "Slice", SliceRule);
    RegisterInferenceRule("", "Expand", ExpandRule);
    RegisterInferenceRule("", "ConstantOfShape", ConstantOfShapeRule);
    RegisterInferenceRule("", "Constant", ConstantRule);
    RegisterInferenceRule("", "Split", SplitRule);
    RegisterInferenceRule("", "Tile", TileRule);
    RegisterInferenceRule("", "NonZero", NonZeroRule);
    RegisterInferenceRule("", "Range", RangeRule);
  }
} registrations;

}  // namespace
}  // namespace onyx
