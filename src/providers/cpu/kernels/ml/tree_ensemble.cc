// Tree ensembles (ai.onnx.ml): TreeEnsembleRegressor and TreeEnsembleClassifier (opsets 1-3,
// *_as_tensor attributes from 3), and TreeEnsemble (opset 5: index-linked nodes and leaves,
// BRANCH_MEMBER sets). Scoring follows ONNX Runtime, the converters' reference:
//  - one target: only PROBIT transforms, base_values[0] is added when there is one base value;
//  - several targets: a target no leaf voted for stays 0 (its base value is not added);
//  - classifiers: the binary rules of ORT (weights_are_all_positive, one voting class, ...).
// Thresholds compare in double when the input or the attributes are double, else in float.
#include <unordered_map>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

enum class Mode : uint8_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember, kLeaf };
enum class Aggregate { kAverage, kSum, kMin, kMax };

struct LeafWeight {
  int64_t target;
  double value;
};

struct TreeNode {
  Mode mode = Mode::kLeaf;
  bool missing_true = false;
  int64_t feature = 0;
  double threshold = 0;
  int32_t true_next = -1, false_next = -1;  // node indices
  int32_t first_weight = 0, num_weights = 0;  // leaves
  std::vector<double> members;                // BRANCH_MEMBER
};

template <typename C>
bool Goes(const TreeNode& n, C v) {
  if (n.missing_true && std::isnan(static_cast<double>(v))) return true;
  const C t = static_cast<C>(n.threshold);
  switch (n.mode) {
    case Mode::kLeq: return v <= t;
    case Mode::kLt: return v < t;
    case Mode::kGte: return v >= t;
    case Mode::kGt: return v > t;
    case Mode::kEq: return v == t;
    case Mode::kNeq: return v != t;
    case Mode::kMember:
      for (double m : n.members)
        if (v == static_cast<C>(m)) return true;
      return false;
    case Mode::kLeaf: break;
  }
  return false;
}

// A forest with its leaves' weights; built once per node, read-only afterwards.
class Forest {
 public:
  std::vector<TreeNode> nodes;
  std::vector<int32_t> roots;
  std::vector<LeafWeight> weights;
  int64_t max_feature = -1;
  bool use_double = false;

  // Rejects cycles, so evaluation always ends at a leaf.
  void CheckAcyclic(const KernelInfo& info) const {
    std::vector<uint8_t> state(nodes.size(), 0);  // 0 new, 1 on the path, 2 done
    for (int32_t root : roots) {
      std::vector<std::pair<int32_t, int>> stack{{root, 0}};
      while (!stack.empty()) {
        auto& [id, step] = stack.back();
        if (step == 0) {
          if (state[id] == 2 || nodes[id].mode == Mode::kLeaf) {
            state[id] = 2;
            stack.pop_back();
            continue;
          }
          state[id] = 1;
        }
        if (step < 2) {
          const int32_t next = step == 0 ? nodes[id].true_next : nodes[id].false_next;
          ++step;
          if (state[next] == 1) info.Fail(StrCat("the trees contain a cycle through node index ", next));
          if (state[next] == 0) stack.push_back({next, 0});
          continue;
        }
        state[id] = 2;
        stack.pop_back();
      }
    }
  }

  template <typename C, typename In>
  const TreeNode& Leaf(int32_t root, const In* x) const {
    const TreeNode* n = &nodes[root];
    while (n->mode != Mode::kLeaf) {
      const C v = static_cast<C>(ToCompute(x[n->feature]));
      n = &nodes[Goes<C>(*n, v) ? n->true_next : n->false_next];
    }
    return *n;
  }
};

struct Score {
  double value = 0;
  bool has = false;
};

Mode ParseMode(const KernelInfo& info, const std::string& s) {
  if (s == "BRANCH_LEQ") return Mode::kLeq;
  if (s == "BRANCH_LT") return Mode::kLt;
  if (s == "BRANCH_GTE") return Mode::kGte;
  if (s == "BRANCH_GT") return Mode::kGt;
  if (s == "BRANCH_EQ") return Mode::kEq;
  if (s == "BRANCH_NEQ") return Mode::kNeq;
  if (s == "LEAF") return Mode::kLeaf;
  info.Fail(StrCat("nodes_modes value '", s, "' is not a BRANCH_* mode or LEAF"));
}

// Builds a forest from the opset 1-3 attributes; `prefix` is "target" or "class".
Forest BuildV3(const KernelInfo& info, const std::string& prefix, int64_t num_targets) {
  Forest f;
  if (info.opset() < 3) {
    // The *_as_tensor attributes arrived with opset 3.
    for (const char* name : {"base_values_as_tensor", "nodes_values_as_tensor", "nodes_hitrates_as_tensor",
                             "target_weights_as_tensor", "class_weights_as_tensor"})
      if (info.HasAttr(name)) info.Fail(StrCat("attribute '", name, "' needs ai.onnx.ml opset 3 or later"));
  }
  const auto tree_ids = info.GetIntsOr("nodes_treeids", {});
  const auto node_ids = info.GetIntsOr("nodes_nodeids", {});
  const auto features = info.GetIntsOr("nodes_featureids", {});
  const auto modes = info.GetStringsOr("nodes_modes", {});
  const auto true_ids = info.GetIntsOr("nodes_truenodeids", {});
  const auto false_ids = info.GetIntsOr("nodes_falsenodeids", {});
  const auto missing = info.GetIntsOr("nodes_missing_value_tracks_true", {});
  bool values_double = false, weights_double = false;
  const auto values = GetNumbers(info, "nodes_values", &values_double);
  const size_t n = tree_ids.size();
  if (n == 0) info.Fail("the ensemble has no nodes");
  if (node_ids.size() != n || features.size() != n || modes.size() != n || true_ids.size() != n ||
      false_ids.size() != n || values.size() != n)
    info.Fail("nodes_treeids, nodes_nodeids, nodes_featureids, nodes_modes, nodes_values, nodes_truenodeids and "
              "nodes_falsenodeids must all have the same length");
  if (!missing.empty() && missing.size() != n)
    info.Fail("nodes_missing_value_tracks_true must have one value per node");
  auto key = [](int64_t tree, int64_t node) { return std::pair<int64_t, int64_t>(tree, node); };
  struct PairHash {
    size_t operator()(const std::pair<int64_t, int64_t>& p) const {
      return std::hash<int64_t>()(p.first * 1000003 ^ p.second);
    }
  };
  std::unordered_map<std::pair<int64_t, int64_t>, int32_t, PairHash> index;
  f.nodes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (!index.emplace(key(tree_ids[i], node_ids[i]), static_cast<int32_t>(i)).second)
      info.Fail(StrCat("node ", node_ids[i], " of tree ", tree_ids[i], " is defined twice"));
    TreeNode& nd = f.nodes[i];
    nd.mode = ParseMode(info, modes[i]);
    nd.feature = features[i];
    nd.threshold = values[i];
    nd.missing_true = !missing.empty() && missing[i] == 1;
    if (nd.mode != Mode::kLeaf) {
      if (nd.feature < 0) info.Fail(StrCat("node ", node_ids[i], " of tree ", tree_ids[i], " has a negative feature id"));
      f.max_feature = std::max(f.max_feature, nd.feature);
    }
    if (i == 0 || tree_ids[i] != tree_ids[i - 1]) f.roots.push_back(static_cast<int32_t>(i));
  }
  for (size_t i = 0; i < n; ++i) {
    TreeNode& nd = f.nodes[i];
    if (nd.mode == Mode::kLeaf) continue;
    auto find = [&](int64_t id, const char* which) {
      auto it = index.find(key(tree_ids[i], id));
      if (it == index.end())
        info.Fail(StrCat("node ", node_ids[i], " of tree ", tree_ids[i], ": ", which, " node ", id, " does not exist"));
      if (it->second == static_cast<int32_t>(i))
        info.Fail(StrCat("node ", node_ids[i], " of tree ", tree_ids[i], " points to itself"));
      return it->second;
    };
    nd.true_next = find(true_ids[i], "true");
    nd.false_next = find(false_ids[i], "false");
  }
  // Leaf weights, in (tree, node, position) order.
  const auto w_ids = info.GetIntsOr(prefix + "_ids", {});
  const auto w_nodes = info.GetIntsOr(prefix + "_nodeids", {});
  const auto w_trees = info.GetIntsOr(prefix + "_treeids", {});
  const auto w_values = GetNumbers(info, prefix + "_weights", &weights_double);
  if (w_nodes.size() != w_ids.size() || w_trees.size() != w_ids.size() || w_values.size() != w_ids.size())
    info.Fail(StrCat(prefix, "_ids, ", prefix, "_nodeids, ", prefix, "_treeids and ", prefix,
                     "_weights must have the same length"));
  std::vector<size_t> order(w_ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(w_trees[a], w_nodes[a], a) < std::tie(w_trees[b], w_nodes[b], b);
  });
  for (size_t k : order) {
    auto it = index.find(key(w_trees[k], w_nodes[k]));
    if (it == index.end())
      info.Fail(StrCat(prefix, " weight ", k, " names node ", w_nodes[k], " of tree ", w_trees[k], ", which does not exist"));
    TreeNode& leaf = f.nodes[it->second];
    if (leaf.mode != Mode::kLeaf) continue;  // old converters left such weights; ignored as ORT does
    if (w_ids[k] < 0 || w_ids[k] >= num_targets)
      info.Fail(StrCat(prefix, "_ids[", k, "] = ", w_ids[k], " is out of range [0, ", num_targets, ")"));
    if (leaf.num_weights == 0) leaf.first_weight = static_cast<int32_t>(f.weights.size());
    ++leaf.num_weights;
    f.weights.push_back({w_ids[k], w_values[k]});
  }
  for (size_t i = 0; i < n; ++i)
    if (f.nodes[i].mode == Mode::kLeaf && f.nodes[i].num_weights == 0)
      info.Fail(StrCat("leaf ", node_ids[i], " of tree ", tree_ids[i], " has no weight"));
  bool base_double = false;
  GetNumbers(info, "base_values", &base_double);
  f.use_double = values_double || weights_double || base_double;
  f.CheckAcyclic(info);
  return f;
}

// Accumulates the leaves reached by one row into per-target scores.
class Scorer {
 public:
  Scorer(const Forest& f, Aggregate agg, int64_t targets) : forest_(f), agg_(agg), targets_(targets) {}

  template <typename C, typename In>
  void Row(const In* x, Score* scores) const {
    for (int64_t t = 0; t < targets_; ++t) scores[t] = Score{};
    for (int32_t root : forest_.roots) {
      const TreeNode& leaf = forest_.Leaf<C>(root, x);
      if (targets_ == 1) {
        Add<C>(scores[0], forest_.weights[leaf.first_weight].value);  // one target: the first weight
        continue;
      }
      for (int32_t w = 0; w < leaf.num_weights; ++w) {
        const LeafWeight& lw = forest_.weights[leaf.first_weight + w];
        Add<C>(scores[lw.target], lw.value);
      }
    }
  }

 private:
  template <typename C>
  void Add(Score& s, double v) const {
    const C cv = static_cast<C>(v), cur = static_cast<C>(s.value);
    switch (agg_) {
      case Aggregate::kSum:
      case Aggregate::kAverage: s.value = static_cast<C>(cur + cv); break;
      case Aggregate::kMin: s.value = (!s.has || cv < cur) ? cv : cur; break;
      case Aggregate::kMax: s.value = (!s.has || cv > cur) ? cv : cur; break;
    }
    s.has = true;
  }

  const Forest& forest_;
  Aggregate agg_;
  int64_t targets_;
};

using TreeInputTypes = TypeList<float, double, int64_t, int32_t>;

// Runs fn(C tag, In tag) for the input type and the comparison type.
template <typename List, typename Fn>
void DispatchTree(KernelContext& ctx, const Forest& f, const Tensor& x, List list, Fn&& fn) {
  const bool dbl = f.use_double || x.dtype() == DataType::kDouble;
  if (!TryDispatch(list, x.dtype(), [&](auto in_tag) {
        if (dbl) fn(TypeTag<double>{}, in_tag);
        else fn(TypeTag<float>{}, in_tag);
      }))
    ctx.Fail(StrCat("input X has unsupported element type ", DataTypeName(x.dtype())));
}

RowsCols TreeRows(KernelContext& ctx, const Forest& f, const Tensor& x) {
  const RowsCols rc = FeatureRows(ctx, x);
  if (f.max_feature >= rc.cols)
    ctx.Fail(StrCat("the trees read feature ", f.max_feature, " but the input has ", rc.cols, " features"));
  return rc;
}

// Regression scores (opsets 1-3 and 5): aggregation, base values and transform of one row.
template <typename C>
void FinishRegression(Score* s, int64_t targets, Aggregate agg, size_t n_trees, const std::vector<double>& base,
                      PostTransform post, C* out) {
  if (targets == 1) {
    const C origin = base.size() == 1 ? static_cast<C>(base[0]) : C(0);
    C v = static_cast<C>(s[0].value);
    if (agg == Aggregate::kAverage) v = static_cast<C>(v / static_cast<C>(n_trees));
    v = static_cast<C>(v + origin);
    out[0] = post == PostTransform::kProbit ? static_cast<C>(Probit(static_cast<float>(v))) : v;
    return;
  }
  const bool use_base = static_cast<int64_t>(base.size()) == targets;
  for (int64_t t = 0; t < targets; ++t) {
    C v = static_cast<C>(s[t].value);
    if (agg == Aggregate::kAverage) v = static_cast<C>(v / static_cast<C>(n_trees));
    if (use_base) v = static_cast<C>(v + static_cast<C>(base[t]));
    out[t] = s[t].has ? v : C(0);
  }
  TransformRow(post, out, targets);
}

Aggregate ParseAggregate(const KernelInfo& info, const std::string& s) {
  if (s == "SUM") return Aggregate::kSum;
  if (s == "AVERAGE") return Aggregate::kAverage;
  if (s == "MIN") return Aggregate::kMin;
  if (s == "MAX") return Aggregate::kMax;
  info.Fail(StrCat("aggregate_function '", s, "' is not one of SUM, AVERAGE, MIN, MAX"));
}

class TreeEnsembleRegressor final : public OpKernel {
 public:
  explicit TreeEnsembleRegressor(const KernelInfo& info)
      : targets_(info.GetIntOr("n_targets", 1)),
        agg_(ParseAggregate(info, info.GetStringOr("aggregate_function", "SUM"))),
        post_(ParsePostTransform(info, info.GetStringOr("post_transform", "NONE"))),
        base_(GetNumbers(info, "base_values")) {
    if (targets_ < 1) info.Fail(StrCat("n_targets must be positive, got ", targets_));
    if (!base_.empty() && static_cast<int64_t>(base_.size()) != targets_)
      info.Fail(StrCat("base_values has ", base_.size(), " values; expected 0 or n_targets = ", targets_));
    forest_ = BuildV3(info, "target", targets_);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const RowsCols rc = TreeRows(ctx, forest_, x);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, {rc.rows, targets_});
    float* py = y.data<float>();
    const Scorer scorer(forest_, agg_, targets_);
    DispatchTree(ctx, forest_, x, TreeInputTypes{}, [&](auto c_tag, auto in_tag) {
      using C = typename decltype(c_tag)::type;
      using In = typename decltype(in_tag)::type;
      const In* px = x.data<In>();
      ThreadPool::For(ctx.thread_pool(), rc.rows, static_cast<double>(forest_.roots.size() * 8), [&](int64_t b, int64_t e) {
        std::vector<Score> scores(static_cast<size_t>(targets_));
        std::vector<C> out(static_cast<size_t>(targets_));
        for (int64_t r = b; r < e; ++r) {
          scorer.Row<C>(px + r * rc.cols, scores.data());
          FinishRegression<C>(scores.data(), targets_, agg_, forest_.roots.size(), base_, post_, out.data());
          for (int64_t t = 0; t < targets_; ++t) py[r * targets_ + t] = static_cast<float>(out[t]);
        }
      });
    });
  }

 private:
  int64_t targets_;
  Aggregate agg_;
  PostTransform post_;
  std::vector<double> base_;
  Forest forest_;
};

class TreeEnsembleClassifier final : public OpKernel {
 public:
  explicit TreeEnsembleClassifier(const KernelInfo& info)
      : labels_int_(info.GetIntsOr("classlabels_int64s", {})),
        labels_str_(info.GetStringsOr("classlabels_strings", {})),
        post_(ParsePostTransform(info, info.GetStringOr("post_transform", "NONE"))),
        base_(GetNumbers(info, "base_values")) {
    if (labels_int_.empty() == labels_str_.empty())
      info.Fail("exactly one of classlabels_int64s and classlabels_strings must be given");
    classes_ = static_cast<int64_t>(labels_str_.empty() ? labels_int_.size() : labels_str_.size());
    if (classes_ < 2) info.Fail(StrCat("a classifier needs at least 2 class labels, got ", classes_));
    forest_ = BuildV3(info, "class", classes_);
    const auto ids = info.GetIntsOr("class_ids", {});
    std::vector<bool> seen(static_cast<size_t>(classes_), false);
    int64_t distinct = 0;
    for (int64_t id : ids)
      if (id >= 0 && id < classes_ && !seen[id]) seen[id] = true, ++distinct;
    const auto raw = GetNumbers(info, "class_weights");
    all_positive_ = std::all_of(raw.begin(), raw.end(), [](double v) { return v >= 0; });
    binary_case_ = classes_ == 2 && distinct == 1;
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const RowsCols rc = TreeRows(ctx, forest_, x);
    Tensor& y = ctx.AllocateOutput(0, labels_str_.empty() ? DataType::kInt64 : DataType::kString, {rc.rows});
    Tensor& z = ctx.AllocateOutput(1, DataType::kFloat, {rc.rows, classes_});
    float* pz = z.data<float>();
    std::fill(pz, pz + z.size(), 0.0f);
    const Scorer scorer(forest_, Aggregate::kSum, classes_);
    DispatchTree(ctx, forest_, x, TreeInputTypes{}, [&](auto c_tag, auto in_tag) {
      using C = typename decltype(c_tag)::type;
      using In = typename decltype(in_tag)::type;
      const In* px = x.data<In>();
      ThreadPool::For(ctx.thread_pool(), rc.rows, static_cast<double>(forest_.roots.size() * 8), [&](int64_t b, int64_t e) {
        std::vector<Score> scores(static_cast<size_t>(classes_));
        for (int64_t r = b; r < e; ++r) {
          scorer.Row<C>(px + r * rc.cols, scores.data());
          const int64_t label = Finish<C>(scores, pz + r * classes_);
          if (labels_str_.empty()) y.data<int64_t>()[r] = label;
          else y.data<std::string>()[r] = labels_str_[label];
        }
      });
    });
  }

 private:
  // Label of the class (an int64 label, or an index into the string labels).
  int64_t LabelAt(int64_t cls) const { return labels_str_.empty() ? labels_int_[cls] : cls; }

  // ONNX Runtime's binary decision; sets how the single score is widened to two columns.
  int64_t BinaryLabel(const std::vector<Score>& s, bool two, SecondClass& second) const {
    const double pos = (two && s[1].has) ? s[1].value : (s[0].has ? s[0].value : 0.0);
    if (binary_case_) {
      if (all_positive_) {
        second = pos > 0.5 ? SecondClass::kComplement : SecondClass::kComplementNeg;
        return LabelAt(pos > 0.5 ? 1 : 0);
      }
      second = pos > 0 ? SecondClass::kMirror : SecondClass::kMirrorNeg;
      return LabelAt(pos > 0 ? 1 : 0);
    }
    // Not a one-voting-class model: ORT labels 1/0 (indices for string labels).
    return pos > 0 ? 1 : 0;
  }

  template <typename C>
  int64_t Finish(std::vector<Score>& s, float* out) const {
    auto val = [](const Score& sc) { return sc.has ? static_cast<C>(sc.value) : C(0); };
    if (classes_ > 2) {
      for (size_t k = 0; k < base_.size() && k < s.size(); ++k) {
        if (!s[k].has) s[k] = Score{base_[k], true};
        else s[k].value = static_cast<C>(static_cast<C>(s[k].value) + static_cast<C>(base_[k]));
      }
      int64_t best = -1;
      C best_v = 0;
      for (int64_t k = 0; k < classes_; ++k)
        if (s[k].has && (best < 0 || static_cast<C>(s[k].value) > best_v)) best = k, best_v = static_cast<C>(s[k].value);
      std::vector<C> row(static_cast<size_t>(classes_));
      for (int64_t k = 0; k < classes_; ++k) row[k] = val(s[k]);
      TransformRow(post_, row.data(), classes_);
      for (int64_t k = 0; k < classes_; ++k) out[k] = static_cast<float>(row[k]);
      return LabelAt(best < 0 ? 0 : best);
    }
    SecondClass second = SecondClass::kNone;
    bool two = true;
    if (base_.size() == 2) {
      if (s[1].has) {
        // ORT: the class-1 score becomes base[1] + score[0], class 0 its negation.
        s[1].value = static_cast<C>(base_[1]) + static_cast<C>(s[0].value);
        s[0].value = -static_cast<C>(s[1].value);
      } else {
        s[1].value = static_cast<C>(s[1].value) + static_cast<C>(base_[1]);
        s[0].value = static_cast<C>(s[0].value) + static_cast<C>(base_[0]);
      }
    } else if (base_.size() == 1) {
      s[0].value = static_cast<C>(s[0].value) + static_cast<C>(base_[0]);
      two = s[1].has;
    } else if (base_.empty()) {
      second = SecondClass::kMirrorNeg;
      two = s[1].has;
    }
    const int64_t label = BinaryLabel(s, two, second);
    std::vector<C> row;
    row.push_back(val(s[0]));
    if (two) row.push_back(val(s[1]));
    std::vector<C> written(2, C(0));
    WriteScores(row, post_, second, written.data());
    out[0] = static_cast<float>(written[0]);
    out[1] = static_cast<float>(written[1]);
    return label;
  }

  std::vector<int64_t> labels_int_;
  std::vector<std::string> labels_str_;
  PostTransform post_;
  std::vector<double> base_;
  int64_t classes_ = 0;
  Forest forest_;
  bool all_positive_ = true;
  bool binary_case_ = false;
};

// ai.onnx.ml opset 5: nodes and leaves are separate index spaces; modes are uint8 codes.
class TreeEnsemble final : public OpKernel {
 public:
  explicit TreeEnsemble(const KernelInfo& info) : targets_(info.GetIntOr("n_targets", 0)) {
    if (targets_ < 1) info.Fail(StrCat("n_targets must be positive, got ", targets_));
    const int64_t agg = info.GetIntOr("aggregate_function", 1);
    if (agg < 0 || agg > 3) info.Fail(StrCat("aggregate_function ", agg, " is not 0..3"));
    agg_ = static_cast<Aggregate>(agg);
    const int64_t post = info.GetIntOr("post_transform", 0);
    static constexpr PostTransform kPosts[] = {PostTransform::kNone, PostTransform::kSoftmax, PostTransform::kLogistic,
                                               PostTransform::kSoftmaxZero, PostTransform::kProbit};
    if (post < 0 || post > 4) info.Fail(StrCat("post_transform ", post, " is not 0..4"));
    post_ = kPosts[post];
    Build(info);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const RowsCols rc = TreeRows(ctx, forest_, x);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {rc.rows, targets_});
    const Scorer scorer(forest_, agg_, targets_);
    DispatchTree(ctx, forest_, x, TypeList<float, double, Float16>{}, [&](auto c_tag, auto in_tag) {
      using C = typename decltype(c_tag)::type;
      using In = typename decltype(in_tag)::type;
      const In* px = x.data<In>();
      In* py = y.data<In>();
      ThreadPool::For(ctx.thread_pool(), rc.rows, static_cast<double>(forest_.roots.size() * 8), [&](int64_t b, int64_t e) {
        std::vector<Score> scores(static_cast<size_t>(targets_));
        std::vector<C> out(static_cast<size_t>(targets_));
        for (int64_t r = b; r < e; ++r) {
          scorer.Row<C>(px + r * rc.cols, scores.data());
          FinishRegression<C>(scores.data(), targets_, agg_, forest_.roots.size(), {}, post_, out.data());
          for (int64_t t = 0; t < targets_; ++t) py[r * targets_ + t] = FromCompute<In>(static_cast<ComputeType<In>>(out[t]));
        }
      });
    });
  }

 private:
  void Build(const KernelInfo& info) {
    const auto features = info.GetIntsOr("nodes_featureids", {});
    const auto true_ids = info.GetIntsOr("nodes_truenodeids", {});
    const auto false_ids = info.GetIntsOr("nodes_falsenodeids", {});
    const auto true_leaf = info.GetIntsOr("nodes_trueleafs", {});
    const auto false_leaf = info.GetIntsOr("nodes_falseleafs", {});
    const auto missing = info.GetIntsOr("nodes_missing_value_tracks_true", {});
    const auto leaf_targets = info.GetIntsOr("leaf_targetids", {});
    const auto tree_roots = info.GetIntsOr("tree_roots", {});
    bool dbl_splits = false, dbl_weights = false, dbl_members = false;
    const auto splits = GetNumbers(info, "nodes_splits", &dbl_splits);
    const auto leaf_weights = GetNumbers(info, "leaf_weights", &dbl_weights);
    const auto members = GetNumbers(info, "membership_values", &dbl_members);
    std::vector<int64_t> modes;
    if (info.HasAttr("nodes_modes")) {
      const Tensor& t = info.GetTensor("nodes_modes");
      if (t.dtype() != DataType::kUInt8) info.Fail("nodes_modes must be a uint8 tensor");
      for (int64_t i = 0; i < t.size(); ++i) modes.push_back(t.data<uint8_t>()[i]);
    }
    const size_t n = features.size();
    if (true_ids.size() != n || false_ids.size() != n || true_leaf.size() != n || false_leaf.size() != n ||
        splits.size() != n || modes.size() != n)
      info.Fail("nodes_featureids, nodes_modes, nodes_splits, nodes_truenodeids, nodes_falsenodeids, nodes_trueleafs "
                "and nodes_falseleafs must all have the same length");
    if (!missing.empty() && missing.size() != n) info.Fail("nodes_missing_value_tracks_true must have one value per node");
    const size_t leaves = leaf_targets.size();
    if (leaf_weights.size() != leaves) info.Fail("leaf_targetids and leaf_weights must have the same length");
    if (tree_roots.empty()) info.Fail("tree_roots must not be empty");
    // Nodes first, then one node per leaf.
    forest_.nodes.resize(n + leaves);
    size_t member_pos = 0;
    for (size_t i = 0; i < n; ++i) {
      TreeNode& nd = forest_.nodes[i];
      if (modes[i] > 6) info.Fail(StrCat("nodes_modes[", i, "] = ", modes[i], " is not 0..6"));
      nd.mode = static_cast<Mode>(modes[i]);
      nd.feature = features[i];
      if (nd.feature < 0) info.Fail(StrCat("nodes_featureids[", i, "] is negative"));
      nd.threshold = splits[i];
      nd.missing_true = !missing.empty() && missing[i] == 1;
      auto link = [&](int64_t id, int64_t is_leaf, const char* which) {
        const int64_t limit = is_leaf ? static_cast<int64_t>(leaves) : static_cast<int64_t>(n);
        if (id < 0 || id >= limit)
          info.Fail(StrCat("node ", i, ": ", which, " ", is_leaf ? "leaf" : "node", " ", id, " is out of range"));
        return static_cast<int32_t>(is_leaf ? static_cast<int64_t>(n) + id : id);
      };
      nd.true_next = link(true_ids[i], true_leaf[i], "true");
      nd.false_next = link(false_ids[i], false_leaf[i], "false");
      if (nd.true_next == static_cast<int32_t>(i) || nd.false_next == static_cast<int32_t>(i))
        info.Fail(StrCat("node ", i, " points to itself"));
      if (nd.mode == Mode::kMember) {
        // This node's set runs up to the next NaN in membership_values.
        while (member_pos < members.size() && !std::isnan(members[member_pos])) nd.members.push_back(members[member_pos++]);
        if (member_pos >= members.size() && nd.members.empty())
          info.Fail(StrCat("node ", i, " is BRANCH_MEMBER but membership_values has no set left for it"));
        ++member_pos;
      }
      forest_.max_feature = std::max(forest_.max_feature, nd.feature);
    }
    for (size_t l = 0; l < leaves; ++l) {
      if (leaf_targets[l] < 0 || leaf_targets[l] >= targets_)
        info.Fail(StrCat("leaf_targetids[", l, "] = ", leaf_targets[l], " is out of range [0, ", targets_, ")"));
      TreeNode& leaf = forest_.nodes[n + l];
      leaf.first_weight = static_cast<int32_t>(forest_.weights.size());
      leaf.num_weights = 1;
      forest_.weights.push_back({leaf_targets[l], leaf_weights[l]});
    }
    for (int64_t root : tree_roots) {
      if (root < 0 || root >= static_cast<int64_t>(std::max(n, leaves)))
        info.Fail(StrCat("tree root ", root, " is out of range"));
      // A root whose two branches are the same id is a lone leaf (the leaf with the root's index).
      const bool lone_leaf = root < static_cast<int64_t>(n) ? true_ids[root] == false_ids[root] : true;
      if (lone_leaf) {
        if (root >= static_cast<int64_t>(leaves)) info.Fail(StrCat("tree root ", root, " is a leaf that does not exist"));
        forest_.roots.push_back(static_cast<int32_t>(n + root));
      } else {
        forest_.roots.push_back(static_cast<int32_t>(root));
      }
    }
    forest_.use_double = dbl_splits || dbl_weights || dbl_members;
    forest_.CheckAcyclic(info);
  }

  int64_t targets_;
  Aggregate agg_ = Aggregate::kSum;
  PostTransform post_ = PostTransform::kNone;
  Forest forest_;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "TreeEnsembleRegressor", 1, 2, TreeEnsembleRegressor);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "TreeEnsembleRegressor", 3, kOpsetMax, TreeEnsembleRegressor);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "TreeEnsembleClassifier", 1, 2, TreeEnsembleClassifier);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "TreeEnsembleClassifier", 3, kOpsetMax, TreeEnsembleClassifier);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "TreeEnsemble", 5, kOpsetMax, TreeEnsemble);

}  // namespace
}  // namespace onyx::ml
