// StringNormalizer (opset 10): drops the elements of a [C] or [1, C] string tensor that are stop
// words (compared case-sensitively or not), then lower- or upper-cases the rest. Case mapping is
// UTF-8 aware and independent of the process locale; the `locale` attribute is accepted (the
// simple Unicode case mapping used here is the same for every locale we support).
#include <unordered_set>

#include "providers/cpu/kernels/string/utf8.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class CaseChange { kNone, kLower, kUpper };

class StringNormalizer final : public OpKernel {
 public:
  explicit StringNormalizer(const KernelInfo& info) {
    const std::string action = info.GetStringOr("case_change_action", "NONE");
    if (action == "NONE") case_ = CaseChange::kNone;
    else if (action == "LOWER") case_ = CaseChange::kLower;
    else if (action == "UPPER") case_ = CaseChange::kUpper;
    else info.Fail(StrCat("case_change_action must be LOWER, UPPER or NONE, got '", action, "'"));
    case_sensitive_ = info.GetIntOr("is_case_sensitive", 0) != 0;
    for (const std::string& w : info.GetStringsOr("stopwords", {}))
      stopwords_.insert(case_sensitive_ ? w : utf8::Lower(w));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() != DataType::kString) ctx.Fail("the input must be a string tensor");
    const bool two_d = x.rank() == 2;
    if (!(x.rank() == 1 || (two_d && x.dim(0) == 1))) ctx.Fail("the input must have shape [C] or [1, C]");
    const std::string* in = x.data<std::string>();
    std::vector<std::string> kept;
    kept.reserve(static_cast<size_t>(x.size()));
    for (int64_t i = 0; i < x.size(); ++i) {
      if (!stopwords_.empty() && stopwords_.count(case_sensitive_ ? in[i] : utf8::Lower(in[i]))) continue;
      switch (case_) {
        case CaseChange::kNone: kept.push_back(in[i]); break;
        case CaseChange::kLower: kept.push_back(utf8::Lower(in[i])); break;
        case CaseChange::kUpper: kept.push_back(utf8::Upper(in[i])); break;
      }
    }
    // Everything removed: the spec's output is a single empty string.
    if (kept.empty()) kept.emplace_back();
    const int64_t n = static_cast<int64_t>(kept.size());
    Tensor& out = ctx.AllocateOutput(0, DataType::kString, two_d ? Shape{1, n} : Shape{n});
    for (int64_t i = 0; i < n; ++i) out.data<std::string>()[i] = std::move(kept[i]);
  }

 private:
  CaseChange case_ = CaseChange::kNone;
  bool case_sensitive_ = false;
  std::unordered_set<std::string> stopwords_;
};

ONYX_CPU_KERNEL("StringNormalizer", 10, kOpsetMax, StringNormalizer);

}  // namespace
}  // namespace onyx
