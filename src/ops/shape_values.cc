// Symbolic values of shape computations (PropagateShapeValues): exporters build the shape of
// a Reshape or Expand from other values' dims (Shape -> Gather -> Unsqueeze -> Concat), so
// following the elements as dims keeps batch and sequence symbols through those ops.
#include <algorithm>
#include <charconv>

#include "ops/broadcast.h"
#include "ops/shape_inference.h"

namespace onyx {
namespace {

using Dims = std::vector<Dim>;
using Values = std::optional<Dims>;

constexpr int64_t kMaxElements = 64;

Values InputValues(const InferenceContext& ctx, size_t i) { return InputShapeValues(ctx, i); }

// Whether a dim is a real symbol (not unknown, not a negative literal).
bool IsSymbol(const Dim& d) { return !d.known() && !d.param.empty() && d.param[0] != '#'; }

// The output's rank when it is 0 or 1 (values describe only such tensors).
bool SmallOutput(const InferenceContext& ctx) {
  const auto& outs = ctx.outputs();
  if (outs.empty() || !outs[0] || !outs[0]->shape) return false;
  return outs[0]->shape->size() <= 1 &&
         (outs[0]->elem_type == DataType::kInt64 || outs[0]->elem_type == DataType::kInt32 ||
          outs[0]->elem_type == DataType::kBool);
}

// Element-wise operands: equal lengths, or one of length 1 against a non-empty other (an empty
// operand against a length-1 one has no element to read).
bool Broadcastable(const Dims& a, const Dims& b) {
  return a.size() == b.size() || (a.size() == 1 && !b.empty()) || (b.size() == 1 && !a.empty());
}

Values ShapeValues(const InferenceContext& ctx) {
  const Dims* in = ctx.input_dims(0);
  if (!in) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in->size());
  int64_t start = ctx.attr_int("start", 0), end = ctx.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return Dims(in->begin() + start, in->begin() + end);
}

Values GatherValues(const InferenceContext& ctx) {
  auto data = InputValues(ctx, 0);
  auto indices = InputValues(ctx, 1);
  if (!data || !indices || ctx.attr_int("axis", 0) != 0) return std::nullopt;
  const int64_t n = static_cast<int64_t>(data->size());
  Dims out;
  for (const Dim& i : *indices) {
    auto index = ShapeValueNumber(i);
    if (!index) return std::nullopt;
    int64_t k = *index;
    if (k < 0) k += n;
    if (k < 0 || k >= n) return std::nullopt;
    out.push_back((*data)[static_cast<size_t>(k)]);
  }
  return out;
}

Values SliceValues(const InferenceContext& ctx) {
  auto data = InputValues(ctx, 0);
  if (!data) return std::nullopt;
  auto [starts, ends, axes, steps] = ReadSliceArgs(ctx);
  if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1) return std::nullopt;
  if (!axes->empty() && (axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))) return std::nullopt;
  if (steps && !steps->empty() && (steps->size() != 1 || (*steps)[0] != 1)) return std::nullopt;
  const int64_t n = static_cast<int64_t>(data->size());
  int64_t s = (*starts)[0], e = (*ends)[0];
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  return Dims(data->begin() + s, data->begin() + e);
}

// Pieces without values but of known length add unknown elements.
Values ConcatValues(const InferenceContext& ctx) {
  Dims out;
  bool any = false;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (auto v = InputValues(ctx, i)) {
      out.insert(out.end(), v->begin(), v->end());
      any = true;
      continue;
    }
    const Dims* d = ctx.input_dims(i);
    if (d == nullptr || d->size() > 1 || (d->size() == 1 && !(*d)[0].known())) return std::nullopt;
    const int64_t n = d->empty() ? 1 : (*d)[0].value;
    if (n > kMaxElements) return std::nullopt;
    out.insert(out.end(), static_cast<size_t>(n), Dim{});
  }
  if (!any) return std::nullopt;
  return out;
}

// Integer arithmetic, element by element with size-1 broadcasting: exact on numbers, x*1,
// x+0, x-0 and x/1 keep a symbol, anything else is unknown.
Values ArithmeticValues(const InferenceContext& ctx, const std::string& op) {
  auto a = InputValues(ctx, 0);
  auto b = InputValues(ctx, 1);
  if (!a || !b || !Broadcastable(*a, *b)) return std::nullopt;
  const size_t n = std::max(a->size(), b->size());
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const Dim& x = (*a)[a->size() == 1 ? 0 : i];
    const Dim& y = (*b)[b->size() == 1 ? 0 : i];
    const auto xv = ShapeValueNumber(x), yv = ShapeValueNumber(y);
    if (xv && yv) {
      int64_t r = 0;
      // A result that overflows int64 is unknown, as in the kernel's arithmetic it is undefined.
      const bool overflow = op == "Add"   ? __builtin_add_overflow(*xv, *yv, &r)
                            : op == "Sub" ? __builtin_sub_overflow(*xv, *yv, &r)
                            : op == "Mul" ? __builtin_mul_overflow(*xv, *yv, &r)
                                          : false;
      if (op == "Add" || op == "Sub" || op == "Mul")
        out.push_back(overflow ? Dim{} : ShapeValueLiteral(r));
      else if (*yv != 0 && *xv >= 0 && *yv > 0)
        out.push_back(ShapeValueLiteral(*xv / *yv));
      else
        out.push_back(Dim{});
      continue;
    }
    const bool keep_x = (op == "Mul" || op == "Div") ? yv == 1 : yv == 0;
    const bool keep_y = (op == "Mul" && xv == 1) || (op == "Add" && xv == 0);
    out.push_back(keep_x ? x : keep_y ? y : Dim{});
  }
  return out;
}

// Equal on dims: equal numbers or the same symbol are 1; different numbers, or a symbol (a dim,
// never negative) against a negative number (expand(-1) as exporters write it), are 0.
Values EqualValues(const InferenceContext& ctx) {
  auto a = InputValues(ctx, 0);
  auto b = InputValues(ctx, 1);
  if (!a || !b || !Broadcastable(*a, *b)) return std::nullopt;
  const size_t n = std::max(a->size(), b->size());
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const Dim& x = (*a)[a->size() == 1 ? 0 : i];
    const Dim& y = (*b)[b->size() == 1 ? 0 : i];
    const auto xv = ShapeValueNumber(x), yv = ShapeValueNumber(y);
    if (xv && yv)
      out.push_back(Dim{*xv == *yv ? 1 : 0, ""});
    else if (IsSymbol(x) && x == y)
      out.push_back(Dim{1, ""});
    else if ((IsSymbol(x) && yv && *yv < 0) || (IsSymbol(y) && xv && *xv < 0))
      out.push_back(Dim{0, ""});
    else
      out.push_back(Dim{});
  }
  return out;
}

Values WhereValues(const InferenceContext& ctx) {
  auto cond = InputValues(ctx, 0);
  auto a = InputValues(ctx, 1);
  auto b = InputValues(ctx, 2);
  if (!cond || !a || !b) return std::nullopt;
  const size_t n = std::max({cond->size(), a->size(), b->size()});
  for (const Dims* v : {&*cond, &*a, &*b})
    if (v->size() != n && v->size() != 1) return std::nullopt;
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const auto c = ShapeValueNumber((*cond)[cond->size() == 1 ? 0 : i]);
    if (!c) return std::nullopt;
    out.push_back(*c != 0 ? (*a)[a->size() == 1 ? 0 : i] : (*b)[b->size() == 1 ? 0 : i]);
  }
  return out;
}

}  // namespace

std::optional<std::vector<Dim>> InputShapeValues(const InferenceContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return std::nullopt;
  if (const Dims* v = ctx.input_values(i)) return *v;
  const Tensor* c = ctx.constant(i);
  if (c == nullptr || c->rank() > 1 || c->size() > kMaxElements) return std::nullopt;
  auto ints = ctx.constant_ints(i);
  if (!ints) return std::nullopt;
  Dims out;
  for (int64_t x : *ints) out.push_back(ShapeValueLiteral(x));
  return out;
}

Dim ShapeValueLiteral(int64_t v) {
  if (v >= 0) return Dim{v, ""};
  std::string param(1, '#');
  param += std::to_string(v);
  return Dim{-1, param};
}

std::optional<int64_t> ShapeValueNumber(const Dim& d) {
  if (d.known()) return d.value;
  // "#<number>" literals; a model's own symbol may look like one ("#x", "#99999999999999999999").
  if (d.param.size() > 1 && d.param[0] == '#') {
    int64_t v = 0;
    const char* end = d.param.data() + d.param.size();
    const auto [p, ec] = std::from_chars(d.param.data() + 1, end, v);
    if (ec == std::errc() && p == end) return v;
  }
  return std::nullopt;
}

std::vector<std::optional<std::vector<Dim>>> PropagateShapeValues(const InferenceContext& ctx) {
  std::vector<Values> out(ctx.num_outputs());
  const ir::Node& node = ctx.node();
  if (!node.domain.empty() || out.empty() || !SmallOutput(ctx)) return out;
  const std::string& op = node.op_type;
  Values v;
  if (op == "Shape")
    v = ShapeValues(ctx);
  else if (op == "Constant") {
    const ir::Attribute* a = node.FindAttribute("value");
    if (a && a->t.defined() && a->t.rank() <= 1 && a->t.size() <= kMaxElements &&
        (a->t.dtype() == DataType::kInt64 || a->t.dtype() == DataType::kInt32)) {
      Dims d;
      for (int64_t i = 0; i < a->t.size(); ++i)
        d.push_back(
            ShapeValueLiteral(a->t.dtype() == DataType::kInt64 ? a->t.data<int64_t>()[i] : a->t.data<int32_t>()[i]));
      v = d;
    }
  } else if (op == "Identity" || op == "Unsqueeze" || op == "Squeeze" || op == "Cast") {
    v = InputValues(ctx, 0);
  } else if (op == "Gather") {
    v = GatherValues(ctx);
  } else if (op == "Slice") {
    v = SliceValues(ctx);
  } else if (op == "Concat") {
    v = ConcatValues(ctx);
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    v = ArithmeticValues(ctx, op);
  } else if (op == "Equal") {
    v = EqualValues(ctx);
  } else if (op == "Where") {
    v = WhereValues(ctx);
  }
  // A value must have as many elements as the output holds.
  const auto& shape = *ctx.outputs()[0]->shape;
  if (v && !shape.empty() && shape[0].known() && shape[0].value != static_cast<int64_t>(v->size())) v.reset();
  if (v && shape.empty() && v->size() != 1) v.reset();
  out[0] = std::move(v);
  return out;
}

}  // namespace onyx
