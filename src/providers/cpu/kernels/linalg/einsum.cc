// Einsum (opset 12): any equation numpy accepts with letters, "..." and an optional explicit
// output ("ij,jk->ik"; implicit form "ij,jk" outputs the labels seen once, in ASCII order,
// after the ellipsis dims). Repeated labels in one operand take a diagonal; labels nobody needs
// later are summed out early; operands are then contracted left to right, each pair as a batched
// GEMM ([batch, M, K] x [batch, K, N]). float16/bfloat16 work in float and round once; small
// integers work in 64 bits and wrap like the element type.
#include <algorithm>
#include <array>
#include <map>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "providers/cpu/kernels/linalg/typed_gemm.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

constexpr int kEllipsisLabel = 1000;  // labels kEllipsisLabel + j stand for ellipsis dims

// The working type: float, double, or 64-bit integers of the element's signedness.
template <typename T>
using WorkType = std::conditional_t<
    std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> || std::is_same_v<T, float>, float,
    std::conditional_t<std::is_same_v<T, double>, double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>>;

struct Term {
  std::vector<int> labels;  // letters, with -1 for "..."
  bool has_ellipsis = false;
};

// An operand during evaluation: one dim per distinct label, row-major contiguous data.
template <typename W>
struct Operand {
  std::vector<int> labels;
  Shape dims;
  std::vector<W> data;
};

std::vector<int64_t> RowMajorStrides(const Shape& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// out[i] = in[sum_d index_d * in_strides[d]] for i walking `dims` in row-major order.
template <typename W, typename Src, typename Convert>
void StridedGather(const Src* in, const Shape& dims, const std::vector<int64_t>& in_strides, W* out, Convert convert) {
  const int64_t total = ShapeSize(dims);
  if (total == 0) return;
  std::vector<int64_t> index(dims.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    out[i] = convert(in[off]);
    for (size_t d = dims.size(); d-- > 0;) {
      off += in_strides[d];
      if (++index[d] < dims[d]) break;
      off -= in_strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

template <typename W>
Operand<W> Permute(Operand<W> op, const std::vector<int>& order_labels) {
  if (op.labels == order_labels) return op;
  const auto strides = RowMajorStrides(op.dims);
  Operand<W> out;
  out.labels = order_labels;
  std::vector<int64_t> in_strides;
  for (int l : order_labels) {
    const size_t d = std::find(op.labels.begin(), op.labels.end(), l) - op.labels.begin();
    out.dims.push_back(op.dims[d]);
    in_strides.push_back(strides[d]);
  }
  out.data.resize(static_cast<size_t>(ShapeSize(out.dims)));
  StridedGather(op.data.data(), out.dims, in_strides, out.data.data(), [](W v) { return v; });
  return out;
}

// Sums out every label of `op` for which keep(label) is false.
template <typename W, typename Keep>
Operand<W> SumOut(Operand<W> op, Keep keep) {
  std::vector<int> kept, dropped;
  for (int l : op.labels) (keep(l) ? kept : dropped).push_back(l);
  if (dropped.empty()) return op;
  std::vector<int> order = kept;
  order.insert(order.end(), dropped.begin(), dropped.end());
  op = Permute(std::move(op), order);
  int64_t run = 1;
  for (size_t d = kept.size(); d < op.dims.size(); ++d) run *= op.dims[d];
  Operand<W> out;
  out.labels = kept;
  out.dims.assign(op.dims.begin(), op.dims.begin() + kept.size());
  out.data.assign(static_cast<size_t>(ShapeSize(out.dims)), W(0));
  for (size_t i = 0; i < out.data.size(); ++i) {
    W acc = 0;
    const W* p = op.data.data() + i * run;
    for (int64_t j = 0; j < run; ++j) acc += p[j];
    out.data[i] = acc;
  }
  return out;
}

// Contracts a and b, keeping the labels for which keep(label) is true.
template <typename W, typename Keep>
Operand<W> Contract(Operand<W> a, Operand<W> b, Keep keep, ThreadPool* pool) {
  auto in = [](const Operand<W>& o, int l) { return std::find(o.labels.begin(), o.labels.end(), l) != o.labels.end(); };
  a = SumOut(std::move(a), [&](int l) { return keep(l) || in(b, l); });
  b = SumOut(std::move(b), [&](int l) { return keep(l) || in(a, l); });
  std::vector<int> batch, m_labels, k_labels, n_labels;
  int64_t batches = 1, m = 1, k = 1, n = 1;
  std::map<int, int64_t> size;
  for (size_t d = 0; d < a.labels.size(); ++d) size[a.labels[d]] = a.dims[d];
  for (size_t d = 0; d < b.labels.size(); ++d) size[b.labels[d]] = b.dims[d];
  for (int l : a.labels) {
    if (!in(b, l))
      m_labels.push_back(l), m *= size[l];
    else if (keep(l))
      batch.push_back(l), batches *= size[l];
    else
      k_labels.push_back(l), k *= size[l];
  }
  for (int l : b.labels)
    if (!in(a, l)) n_labels.push_back(l), n *= size[l];
  std::vector<int> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), m_labels.begin(), m_labels.end());
  a_order.insert(a_order.end(), k_labels.begin(), k_labels.end());
  b_order.insert(b_order.end(), k_labels.begin(), k_labels.end());
  b_order.insert(b_order.end(), n_labels.begin(), n_labels.end());
  a = Permute(std::move(a), a_order);
  b = Permute(std::move(b), b_order);
  Operand<W> out;
  out.labels = batch;
  out.labels.insert(out.labels.end(), m_labels.begin(), m_labels.end());
  out.labels.insert(out.labels.end(), n_labels.begin(), n_labels.end());
  for (int l : out.labels) out.dims.push_back(size[l]);
  out.data.assign(static_cast<size_t>(batches * m * n), W(0));
  if (k == 0) return out;
  for (int64_t bi = 0; bi < batches; ++bi)
    linalg_kernels::TypedGemm<W>(false, false, m, n, k, 1.0f, a.data.data() + bi * m * k, k, b.data.data() + bi * k * n,
                                 n, 0.0f, out.data.data() + bi * m * n, n, pool);
  return out;
}

class Einsum final : public OpKernel {
 public:
  explicit Einsum(const KernelInfo& info) {
    std::string eq;
    for (char ch : info.GetString("equation"))
      if (ch != ' ') eq.push_back(ch);
    const size_t arrow = eq.find("->");
    explicit_output_ = arrow != std::string::npos;
    const std::string lhs = eq.substr(0, arrow);
    size_t start = 0;
    for (;;) {
      const size_t comma = lhs.find(',', start);
      inputs_.push_back(ParseTerm(info, lhs.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (explicit_output_) output_ = ParseTerm(info, eq.substr(arrow + 2));
    if (inputs_.size() != info.num_inputs())
      info.Fail(StrCat("equation '", eq, "' has ", inputs_.size(), " operands but the node has ", info.num_inputs(),
                       " inputs"));
  }

  void Compute(KernelContext& ctx) const override {
    const size_t count = inputs_.size();
    std::vector<const Tensor*> xs;
    for (size_t i = 0; i < count; ++i) {
      xs.push_back(&ctx.required_input(i));
      if (xs[i]->dtype() != xs[0]->dtype()) ctx.Fail("all inputs must have the same element type");
    }
    // Expand each term's "..." into ellipsis labels, right-aligned across operands.
    int64_t ellipsis_rank = 0;
    std::vector<std::vector<int>> labels(count);
    for (size_t i = 0; i < count; ++i) {
      const Term& t = inputs_[i];
      const int64_t explicit_count = static_cast<int64_t>(t.labels.size()) - (t.has_ellipsis ? 1 : 0);
      const int64_t rank = static_cast<int64_t>(xs[i]->rank());
      if (t.has_ellipsis ? rank < explicit_count : rank != explicit_count)
        ctx.Fail(StrCat("operand ", i, " has rank ", rank, " but its term names ", explicit_count, " dims"));
      if (t.has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - explicit_count);
    }
    std::map<int, int64_t> size;  // each label's size (ellipsis dims broadcast)
    std::map<int, int> occurrences;
    for (size_t i = 0; i < count; ++i) {
      const int64_t rank = static_cast<int64_t>(xs[i]->rank());
      const int64_t e = rank - (static_cast<int64_t>(inputs_[i].labels.size()) - (inputs_[i].has_ellipsis ? 1 : 0));
      for (int l : inputs_[i].labels) {
        if (l >= 0)
          labels[i].push_back(l);
        else
          for (int64_t j = 0; j < e; ++j) labels[i].push_back(kEllipsisLabel + static_cast<int>(ellipsis_rank - e + j));
      }
      for (size_t d = 0; d < labels[i].size(); ++d) {
        const int l = labels[i][d];
        const int64_t dim = xs[i]->dim(d);
        ++occurrences[l];
        auto it = size.find(l);
        if (it == size.end())
          size[l] = dim;
        else if (it->second != dim) {
          if (l >= kEllipsisLabel && (it->second == 1 || dim == 1))
            it->second = std::max(it->second, dim);
          else
            ctx.Fail(StrCat("label '", LabelName(l), "' has sizes ", it->second, " and ", dim));
        }
      }
    }
    std::vector<int> out_labels;
    if (explicit_output_) {
      for (int l : output_.labels) {
        if (l < 0) {
          for (int64_t j = 0; j < ellipsis_rank; ++j) out_labels.push_back(kEllipsisLabel + static_cast<int>(j));
        } else {
          if (!size.count(l)) ctx.Fail(StrCat("output label '", LabelName(l), "' is not in any input"));
          if (std::count(out_labels.begin(), out_labels.end(), l)) ctx.Fail("output labels repeat");
          out_labels.push_back(l);
        }
      }
    } else {
      for (int64_t j = 0; j < ellipsis_rank; ++j) out_labels.push_back(kEllipsisLabel + static_cast<int>(j));
      for (const auto& [l, c] : occurrences)
        if (l < kEllipsisLabel && c == 1) out_labels.push_back(l);
    }
    Shape out_shape;
    for (int l : out_labels) out_shape.push_back(size[l]);
    Tensor& y = ctx.AllocateOutput(0, xs[0]->dtype(), out_shape);

    using Types = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                           uint32_t, uint64_t>;
    Dispatch(Types{}, xs[0]->dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using W = WorkType<T>;
      std::vector<Operand<W>> ops(count);
      for (size_t i = 0; i < count; ++i) ops[i] = Load<T, W>(*xs[i], labels[i], size);
      auto needed_after = [&](size_t i, int l) {
        if (std::find(out_labels.begin(), out_labels.end(), l) != out_labels.end()) return true;
        for (size_t j = i + 1; j < count; ++j)
          if (std::find(ops[j].labels.begin(), ops[j].labels.end(), l) != ops[j].labels.end()) return true;
        return false;
      };
      Operand<W> cur = std::move(ops[0]);
      for (size_t i = 1; i < count; ++i)
        cur = Contract(
            std::move(cur), std::move(ops[i]), [&](int l) { return needed_after(i, l); }, ctx.thread_pool());
      cur = SumOut(std::move(cur), [&](int l) { return needed_after(count - 1, l); });
      // Output labels the operands lost (size-1 ellipsis dims) come back as size-1 dims.
      for (int l : out_labels)
        if (std::find(cur.labels.begin(), cur.labels.end(), l) == cur.labels.end())
          cur.labels.push_back(l), cur.dims.push_back(1);
      cur = Permute(std::move(cur), out_labels);
      if (static_cast<int64_t>(cur.data.size()) != y.size()) ctx.Fail("internal error: result size mismatch");
      T* py = y.data<T>();
      for (size_t i = 0; i < cur.data.size(); ++i) {
        if constexpr (std::is_integral_v<T>)
          py[i] = static_cast<T>(cur.data[i]);
        else
          py[i] = FromCompute<T>(static_cast<ComputeType<T>>(cur.data[i]));
      }
    });
  }

 private:
  static std::string LabelName(int l) { return l >= kEllipsisLabel ? std::string("...") : std::string(1, char(l)); }

  static Term ParseTerm(const KernelInfo& info, const std::string& s) {
    Term t;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s.compare(i, 3, "...") == 0) {
        if (t.has_ellipsis) info.Fail(StrCat("term '", s, "' has two ellipses"));
        t.has_ellipsis = true;
        t.labels.push_back(-1);
        i += 2;
      } else if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')) {
        t.labels.push_back(s[i]);
      } else {
        info.Fail(StrCat("bad character '", s[i], "' in equation term '", s, "'"));
      }
    }
    return t;
  }

  // The operand in the working type with one dim per distinct label: repeated labels take the
  // diagonal, ellipsis dims of size 1 that broadcast against larger ones are dropped.
  template <typename T, typename W>
  static Operand<W> Load(const Tensor& x, const std::vector<int>& labels, const std::map<int, int64_t>& size) {
    const auto strides = RowMajorStrides(x.shape());
    Operand<W> op;
    std::vector<int64_t> in_strides;
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      if (x.dim(d) == 1 && size.at(l) != 1) continue;
      auto it = std::find(op.labels.begin(), op.labels.end(), l);
      if (it != op.labels.end()) {
        in_strides[it - op.labels.begin()] += strides[d];
        continue;
      }
      op.labels.push_back(l);
      op.dims.push_back(x.dim(d));
      in_strides.push_back(strides[d]);
    }
    op.data.resize(static_cast<size_t>(ShapeSize(op.dims)));
    StridedGather(x.data<T>(), op.dims, in_strides, op.data.data(), [](T v) -> W {
      if constexpr (std::is_integral_v<T>)
        return static_cast<W>(v);
      else
        return static_cast<W>(ToCompute(v));
    });
    return op;
  }

  std::vector<Term> inputs_;
  Term output_;
  bool explicit_output_ = false;
};

ONYX_CPU_KERNEL("Einsum", 12, kOpsetMax, Einsum);

}  // namespace
}  // namespace onyx
