// SVMClassifier and SVMRegressor (ai.onnx.ml 1), with ONNX Runtime's scoring rules (the
// converters' reference): one-vs-one voting for SVC models, Platt probabilities (prob_a/prob_b)
// combined by libsvm's pairwise-coupling method, and the liblinear form when there are no
// support vectors (kernel forced to LINEAR, rho[0] added to every class score).
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

enum class SvmKernel { kLinear, kPoly, kRbf, kSigmoid };

struct KernelParams {
  SvmKernel type = SvmKernel::kLinear;
  float gamma = 0.0f, coef0 = 0.0f, degree = 0.0f;

  static KernelParams Parse(const KernelInfo& info) {
    KernelParams p;
    const std::string t = info.GetStringOr("kernel_type", "LINEAR");
    if (t == "LINEAR") p.type = SvmKernel::kLinear;
    else if (t == "POLY") p.type = SvmKernel::kPoly;
    else if (t == "RBF") p.type = SvmKernel::kRbf;
    else if (t == "SIGMOID") p.type = SvmKernel::kSigmoid;
    else info.Fail(StrCat("kernel_type '", t, "' is not one of LINEAR, POLY, RBF, SIGMOID"));
    const auto params = info.GetFloatsOr("kernel_params", {});
    if (!params.empty() && params.size() != 3)
      info.Fail(StrCat("kernel_params must hold [gamma, coef0, degree], got ", params.size(), " values"));
    if (params.size() == 3) {
      p.gamma = params[0];
      p.coef0 = params[1];
      p.degree = params[2];
    }
    return p;
  }

  // K(a, b) over k features; `c` is the constant the LINEAR kernel adds.
  float Apply(const float* a, const float* b, int64_t k, float c) const {
    if (type == SvmKernel::kRbf) {
      float sum = 0.0f;
      for (int64_t i = 0; i < k; ++i) {
        const float d = a[i] - b[i];
        sum += d * d;
      }
      return std::exp(-gamma * sum);
    }
    float dot = 0.0f;
    for (int64_t i = 0; i < k; ++i) dot += a[i] * b[i];
    if (type == SvmKernel::kLinear) return dot + c;
    const float v = gamma * dot + coef0;
    if (type == SvmKernel::kSigmoid) return std::tanh(v);
    if (degree == 2.0f) return v * v;
    if (degree == 3.0f) return v * v * v;
    return std::pow(v, degree);
  }
};

// Turns pairwise probabilities r[i*k+j] into class probabilities p (Wu, Lin and Weng 2004,
// method 2, as libsvm computes it).
void PairwiseCoupling(int64_t k, const std::vector<float>& r, float* p) {
  std::vector<float> q(static_cast<size_t>(k * k), 0.0f), qp(static_cast<size_t>(k), 0.0f);
  const float eps = 0.005f / static_cast<float>(k);
  for (int64_t i = 0; i < k; ++i) {
    p[i] = 1.0f / static_cast<float>(k);
    for (int64_t j = 0; j < i; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = q[j * k + i];
    }
    for (int64_t j = i + 1; j < k; ++j) {
      q[i * k + i] += r[j * k + i] * r[j * k + i];
      q[i * k + j] = -r[j * k + i] * r[i * k + j];
    }
  }
  for (int iter = 0; iter < 100; ++iter) {
    float pqp = 0.0f;
    for (int64_t i = 0; i < k; ++i) {
      qp[i] = 0.0f;
      for (int64_t j = 0; j < k; ++j) qp[i] += q[i * k + j] * p[j];
      pqp += p[i] * qp[i];
    }
    float max_error = 0.0f;
    for (int64_t i = 0; i < k; ++i) max_error = std::max(max_error, std::fabs(qp[i] - pqp));
    if (max_error < eps) break;
    for (int64_t i = 0; i < k; ++i) {
      const float diff = (-qp[i] + pqp) / q[i * k + i];
      p[i] += diff;
      pqp = (pqp + diff * (diff * q[i * k + i] + 2 * qp[i])) / (1 + diff) / (1 + diff);
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[i * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

class SVMClassifier final : public OpKernel {
 public:
  explicit SVMClassifier(const KernelInfo& info)
      : kernel_(KernelParams::Parse(info)),
        vectors_per_class_(info.GetIntsOr("vectors_per_class", {})),
        support_vectors_(info.GetFloatsOr("support_vectors", {})),
        coefficients_(info.GetFloatsOr("coefficients", {})),
        rho_(info.GetFloatsOr("rho", {})),
        prob_a_(info.GetFloatsOr("prob_a", {})),
        prob_b_(info.GetFloatsOr("prob_b", {})),
        labels_int_(info.GetIntsOr("classlabels_ints", {})),
        labels_str_(info.GetStringsOr("classlabels_strings", {})),
        post_(ParsePostTransform(info, info.GetStringOr("post_transform", "NONE"))) {
    if (labels_int_.empty() == labels_str_.empty())
      info.Fail("exactly one of classlabels_ints and classlabels_strings must be given");
    if (coefficients_.empty()) info.Fail("coefficients must not be empty");
    if (rho_.empty()) info.Fail("rho must not be empty");
    if (prob_a_.size() != prob_b_.size()) info.Fail("prob_a and prob_b must have the same length");
    classes_ = static_cast<int64_t>(labels_str_.empty() ? labels_int_.size() : labels_str_.size());
    num_classifiers_ = classes_ * (classes_ - 1) / 2;
    for (int64_t v : vectors_per_class_) {
      if (v < 0) info.Fail("vectors_per_class must not be negative");
      starts_.push_back(vectors_);
      vectors_ += v;
    }
    if (vectors_ > 0) {
      svc_ = true;
      if (static_cast<int64_t>(vectors_per_class_.size()) != classes_)
        info.Fail(StrCat("vectors_per_class has ", vectors_per_class_.size(), " values for ", classes_, " classes"));
      if (support_vectors_.size() % vectors_ != 0)
        info.Fail(StrCat(support_vectors_.size(), " support vector values do not split into ", vectors_, " vectors"));
      features_ = static_cast<int64_t>(support_vectors_.size()) / vectors_;
      if (static_cast<int64_t>(coefficients_.size()) < (classes_ - 1) * vectors_)
        info.Fail(StrCat("coefficients must hold (classes - 1) * vectors = ", (classes_ - 1) * vectors_, " values"));
      if (static_cast<int64_t>(rho_.size()) < num_classifiers_)
        info.Fail(StrCat("rho must hold one value per class pair (", num_classifiers_, ")"));
      if (!prob_a_.empty() && static_cast<int64_t>(prob_a_.size()) < num_classifiers_)
        info.Fail(StrCat("prob_a must hold one value per class pair (", num_classifiers_, ")"));
    } else {
      kernel_.type = SvmKernel::kLinear;
      if (classes_ == 0 || coefficients_.size() % classes_ != 0)
        info.Fail(StrCat(coefficients_.size(), " coefficients do not split into ", classes_, " classes"));
      features_ = static_cast<int64_t>(coefficients_.size()) / classes_;
    }
    all_positive_ = std::all_of(coefficients_.begin(), coefficients_.end(), [](float v) { return v >= 0; });
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const RowsCols rc = FeatureRows(ctx, x);
    if (rc.cols != features_) ctx.Fail(StrCat("input has ", rc.cols, " features; the model expects ", features_));
    const std::vector<float> xf = InputAsFloat(ctx, x);
    const bool have_proba = !prob_a_.empty();
    int64_t out_cols = classes_;
    if (svc_ && !have_proba) out_cols = classes_ > 2 ? num_classifiers_ : 2;
    const int64_t n = rc.rows;
    Tensor& y = ctx.AllocateOutput(0, labels_str_.empty() ? DataType::kInt64 : DataType::kString, {n});
    Tensor& z = ctx.AllocateOutput(1, DataType::kFloat, {n, out_cols});
    float* pz = z.data<float>();
    std::fill(pz, pz + z.size(), 0.0f);
    const double cost = static_cast<double>((svc_ ? vectors_ : classes_) * features_ + classes_ * classes_ * 4);
    ThreadPool::For(ctx.thread_pool(), n, cost, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) ScoreRow(xf.data() + r * features_, pz + r * out_cols, y, r);
    });
  }

 private:
  void SetLabel(Tensor& y, int64_t row, int64_t cls) const {
    if (labels_str_.empty()) y.data<int64_t>()[row] = labels_int_[cls];
    else y.data<std::string>()[row] = labels_str_[cls];
  }

  void ScoreRow(const float* x, float* out, Tensor& y, int64_t row) const {
    const bool have_proba = !prob_a_.empty();
    if (!svc_) {
      // liblinear form: one score per class.
      for (int64_t c = 0; c < classes_; ++c) out[c] = kernel_.Apply(x, coefficients_.data() + c * features_, features_, rho_[0]);
      const int64_t best = std::max_element(out, out + classes_) - out;
      const float max_weight = out[best];
      int64_t cls = best;
      if (num_classifiers_ == 1 && !have_proba) {
        if ((all_positive_ && max_weight >= 0.5f) || (max_weight > 0 && !all_positive_)) cls = 1;
      }
      SetLabel(y, row, cls);
      if (classes_ > 1) TransformRow(post_, out, classes_);
      else if (post_ == PostTransform::kProbit) out[0] = Probit(out[0]);
      return;
    }
    std::vector<float> kernels(static_cast<size_t>(vectors_));
    for (int64_t v = 0; v < vectors_; ++v) kernels[v] = kernel_.Apply(x, support_vectors_.data() + v * features_, features_, 0.0f);
    std::vector<float> pair_scores(static_cast<size_t>(num_classifiers_));
    std::vector<int64_t> votes(static_cast<size_t>(classes_), 0);
    int64_t k = 0;
    for (int64_t i = 0; i < classes_ - 1; ++i) {
      for (int64_t j = i + 1; j < classes_; ++j, ++k) {
        double sum = 0;
        const float* ci = coefficients_.data() + (j - 1) * vectors_ + starts_[i];
        for (int64_t m = 0; m < vectors_per_class_[i]; ++m) sum += ci[m] * kernels[starts_[i] + m];
        const float* cj = coefficients_.data() + i * vectors_ + starts_[j];
        for (int64_t m = 0; m < vectors_per_class_[j]; ++m) sum += cj[m] * kernels[starts_[j] + m];
        sum += rho_[k];
        pair_scores[k] = static_cast<float>(sum);
        ++votes[sum > 0 ? i : j];
      }
    }
    SetLabel(y, row, std::max_element(votes.begin(), votes.end()) - votes.begin());
    if (have_proba) {
      std::vector<float> r(static_cast<size_t>(classes_ * classes_), 0.0f);
      k = 0;
      for (int64_t i = 0; i < classes_ - 1; ++i) {
        for (int64_t j = i + 1; j < classes_; ++j, ++k) {
          const float p = 1.0f - Logistic(pair_scores[k] * prob_a_[k] + prob_b_[k]);
          const float clipped = std::min(std::max(p, 1.0e-7f), 1 - 1.0e-7f);
          r[i * classes_ + j] = clipped;
          r[j * classes_ + i] = 1 - clipped;
        }
      }
      PairwiseCoupling(classes_, r, out);
      if (classes_ > 1) TransformRow(post_, out, classes_);
      else if (post_ == PostTransform::kProbit) out[0] = Probit(out[0]);
      return;
    }
    if (classes_ > 2) {
      std::copy(pair_scores.begin(), pair_scores.end(), out);
      TransformRow(post_, out, num_classifiers_);
      return;
    }
    if (num_classifiers_ == 1) {
      const float s = pair_scores[0];
      if (post_ == PostTransform::kProbit) {
        out[0] = Probit(s);
      } else if (post_ == PostTransform::kNone) {
        out[0] = -s;
        out[1] = s;
      } else {
        const float p = post_ == PostTransform::kLogistic ? Logistic(s) : s;
        out[0] = 1 - p;
        out[1] = p;
      }
    }
  }

  KernelParams kernel_;
  std::vector<int64_t> vectors_per_class_, starts_;
  std::vector<float> support_vectors_, coefficients_, rho_, prob_a_, prob_b_;
  std::vector<int64_t> labels_int_;
  std::vector<std::string> labels_str_;
  PostTransform post_;
  int64_t classes_ = 0, num_classifiers_ = 0, vectors_ = 0, features_ = 0;
  bool svc_ = false;
  bool all_positive_ = true;
};

class SVMRegressor final : public OpKernel {
 public:
  explicit SVMRegressor(const KernelInfo& info)
      : kernel_(KernelParams::Parse(info)),
        vectors_(info.GetIntOr("n_supports", 0)),
        support_vectors_(info.GetFloatsOr("support_vectors", {})),
        coefficients_(info.GetFloatsOr("coefficients", {})),
        rho_(info.GetFloatsOr("rho", {})),
        one_class_(info.GetIntOr("one_class", 0) != 0) {
    ParsePostTransform(info, info.GetStringOr("post_transform", "NONE"));  // validated; not applied (as ORT)
    if (coefficients_.empty()) info.Fail("coefficients must not be empty");
    if (rho_.empty()) info.Fail("rho must not be empty");
    if (vectors_ < 0) info.Fail("n_supports must not be negative");
    if (vectors_ > 0) {
      if (support_vectors_.size() % vectors_ != 0)
        info.Fail(StrCat(support_vectors_.size(), " support vector values do not split into ", vectors_, " vectors"));
      if (static_cast<int64_t>(coefficients_.size()) < vectors_)
        info.Fail(StrCat("coefficients must hold one value per support vector (", vectors_, ")"));
      features_ = static_cast<int64_t>(support_vectors_.size()) / vectors_;
    } else {
      kernel_.type = SvmKernel::kLinear;
      features_ = static_cast<int64_t>(coefficients_.size());
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const RowsCols rc = FeatureRows(ctx, x);
    if (rc.cols != features_) ctx.Fail(StrCat("input has ", rc.cols, " features; the model expects ", features_));
    const std::vector<float> xf = InputAsFloat(ctx, x);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, {rc.rows, 1});
    float* py = y.data<float>();
    ThreadPool::For(ctx.thread_pool(), rc.rows, static_cast<double>((vectors_ + 1) * features_), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const float* row = xf.data() + r * features_;
        float v;
        if (vectors_ > 0) {
          v = rho_[0];
          for (int64_t s = 0; s < vectors_; ++s)
            v += coefficients_[s] * kernel_.Apply(row, support_vectors_.data() + s * features_, features_, 0.0f);
        } else {
          v = kernel_.Apply(row, coefficients_.data(), features_, rho_[0]);
        }
        py[r] = one_class_ ? (v > 0 ? 1.0f : -1.0f) : v;
      }
    });
  }

 private:
  KernelParams kernel_;
  int64_t vectors_;
  std::vector<float> support_vectors_, coefficients_, rho_;
  bool one_class_;
  int64_t features_ = 0;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "SVMClassifier", 1, kOpsetMax, SVMClassifier);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "SVMRegressor", 1, kOpsetMax, SVMRegressor);

}  // namespace
}  // namespace onyx::ml
