// LinearClassifier and LinearRegressor (ai.onnx.ml 1): scores = X * coefficients^T + intercepts,
// then ONNX Runtime's post-transform and labelling rules (which the converters target):
//  - classifier with one score column (two class labels): label = score > 0 ? second : first,
//    scores [1 - p, p] with p = logistic(s) under LOGISTIC, else s (PROBIT: probits, packed);
//  - one regression target: only PROBIT applies.
#include "linalg/gemm.h"
#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

// X [N, C] (or [C]) as float times coefficients [E, C]^T plus intercepts [E] (or none).
std::vector<float> LinearScores(KernelContext& ctx, const Tensor& x, const std::vector<float>& coefficients,
                                const std::vector<float>& intercepts, int64_t num_targets, RowsCols* rc) {
  *rc = FeatureRows(ctx, x);
  if (static_cast<int64_t>(coefficients.size()) != num_targets * rc->cols)
    ctx.Fail(StrCat(coefficients.size(), " coefficients do not make ", num_targets, " rows of ", rc->cols,
                    " features (the input's columns)"));
  const std::vector<float> xf = InputAsFloat(ctx, x);
  std::vector<float> scores(static_cast<size_t>(rc->rows * num_targets), 0.0f);
  // The intercepts are the GEMM's column bias (an empty sum over no features gives them alone).
  linalg::GemmEpilogue ep;
  ep.bias_per_col = intercepts.empty() ? nullptr : intercepts.data();
  if (rc->rows > 0 && num_targets > 0)
    linalg::Sgemm(false, true, rc->rows, num_targets, rc->cols, 1.0f, xf.data(), rc->cols, coefficients.data(),
                  rc->cols, 0.0f, scores.data(), num_targets, ctx.thread_pool(), &ep);
  return scores;
}

class LinearClassifier final : public OpKernel {
 public:
  explicit LinearClassifier(const KernelInfo& info)
      : coefficients_(info.GetFloats("coefficients")),
        intercepts_(info.GetFloatsOr("intercepts", {})),
        labels_int_(info.GetIntsOr("classlabels_ints", {})),
        labels_str_(info.GetStringsOr("classlabels_strings", {})),
        post_(ParsePostTransform(info, info.GetStringOr("post_transform", "NONE"))) {
    if (labels_int_.empty() == labels_str_.empty())
      info.Fail("exactly one of classlabels_ints and classlabels_strings must be given");
    num_labels_ = static_cast<int64_t>(using_strings() ? labels_str_.size() : labels_int_.size());
    if (coefficients_.empty()) info.Fail("coefficients must not be empty");
    if (intercepts_.size() == 1 && num_labels_ != 2)
      info.Fail(StrCat("one score column (binary classification) needs exactly 2 class labels, got ", num_labels_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    // One score column per intercept (or per coefficient row when there are none).
    const RowsCols shape = FeatureRows(ctx, x);
    const int64_t e = !intercepts_.empty() ? static_cast<int64_t>(intercepts_.size())
                      : shape.cols > 0    ? static_cast<int64_t>(coefficients_.size()) / shape.cols
                                          : 1;
    if (e > 1 && num_labels_ < e) ctx.Fail(StrCat(e, " score columns but only ", num_labels_, " class labels"));
    RowsCols rc;
    const std::vector<float> scores = LinearScores(ctx, x, coefficients_, intercepts_, e, &rc);
    const int64_t n = rc.rows;
    const bool add_second = e == 1 && num_labels_ == 2;
    const int64_t out_cols = add_second ? 2 : e;
    Tensor& y = ctx.AllocateOutput(0, using_strings() ? DataType::kString : DataType::kInt64, {n});
    Tensor& z = ctx.AllocateOutput(1, DataType::kFloat, {n, out_cols});
    auto set_label = [&](int64_t row, int64_t cls) {
      if (using_strings()) y.data<std::string>()[row] = labels_str_[cls];
      else y.data<int64_t>()[row] = labels_int_[cls];
    };
    for (int64_t r = 0; r < n; ++r) {
      const float* s = scores.data() + r * e;
      if (e == 1) {
        const bool positive = s[0] > 0;
        if (num_labels_ == 2) set_label(r, positive ? 1 : 0);
        else if (using_strings()) y.data<std::string>()[r].assign(1, positive ? '1' : '0');
        else y.data<int64_t>()[r] = positive ? 1 : 0;
      } else {
        int64_t best = 0;
        for (int64_t j = 1; j < e; ++j)
          if (s[j] > s[best]) best = j;
        set_label(r, best);
      }
    }
    float* pz = z.data<float>();
    std::fill(pz, pz + z.size(), 0.0f);
    if (e > 1) {
      std::copy(scores.begin(), scores.end(), pz);
      for (int64_t r = 0; r < n; ++r) TransformRow(post_, pz + r * e, e);
    } else if (post_ == PostTransform::kProbit) {
      // ONNX Runtime keeps the N probits packed at the front, even when Z has two columns.
      for (int64_t r = 0; r < n; ++r) pz[r] = Probit(scores[r]);
    } else if (add_second) {
      for (int64_t r = 0; r < n; ++r) {
        const float p = post_ == PostTransform::kLogistic ? Logistic(scores[r]) : scores[r];
        pz[2 * r] = 1.0f - p;
        pz[2 * r + 1] = p;
      }
    } else {
      std::copy(scores.begin(), scores.end(), pz);
    }
  }

 private:
  bool using_strings() const { return !labels_str_.empty(); }

  std::vector<float> coefficients_, intercepts_;
  std::vector<int64_t> labels_int_;
  std::vector<std::string> labels_str_;
  PostTransform post_;
  int64_t num_labels_ = 0;
};

class LinearRegressor final : public OpKernel {
 public:
  explicit LinearRegressor(const KernelInfo& info)
      : coefficients_(info.GetFloatsOr("coefficients", {})),
        intercepts_(info.GetFloatsOr("intercepts", {})),
        targets_(info.GetIntOr("targets", 1)),
        post_(ParsePostTransform(info, info.GetStringOr("post_transform", "NONE"))) {
    if (targets_ < 1) info.Fail(StrCat("targets must be positive, got ", targets_));
    if (!intercepts_.empty() && static_cast<int64_t>(intercepts_.size()) != targets_)
      info.Fail(StrCat(intercepts_.size(), " intercepts for ", targets_, " targets"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    RowsCols rc;
    std::vector<float> scores = LinearScores(ctx, x, coefficients_, intercepts_, targets_, &rc);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, {rc.rows, targets_});
    float* py = y.data<float>();
    for (int64_t r = 0; r < rc.rows; ++r) {
      float* s = scores.data() + r * targets_;
      if (targets_ > 1) TransformRow(post_, s, targets_);
      else if (post_ == PostTransform::kProbit) s[0] = Probit(s[0]);
    }
    std::copy(scores.begin(), scores.end(), py);
  }

 private:
  std::vector<float> coefficients_, intercepts_;
  int64_t targets_;
  PostTransform post_;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "LinearClassifier", 1, kOpsetMax, LinearClassifier);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "LinearRegressor", 1, kOpsetMax, LinearRegressor);

}  // namespace
}  // namespace onyx::ml
