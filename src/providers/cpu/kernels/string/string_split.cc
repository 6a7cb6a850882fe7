// StringSplit (opset 20): splits each string on `delimiter` (Python's str.split(sep, maxsplit):
// empty fields are kept) or, when the delimiter is absent or empty, on runs of whitespace
// (str.split(None, maxsplit): leading/trailing whitespace is dropped). Output Y is X's shape plus
// one axis as long as the longest split, padded with ""; Z counts the substrings.
#include <algorithm>

#include "providers/cpu/kernels/string/utf8.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

std::vector<std::string> SplitOn(const std::string& s, const std::string& sep, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    const size_t at = s.find(sep, start);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

std::vector<std::string> SplitWhitespace(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < s.size()) {
      size_t next = i;
      if (!utf8::IsSpace(utf8::Next(s, next))) break;
      i = next;
    }
  };
  skip_space();
  while (i < s.size()) {
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      // The rest, trailing whitespace included, is the last part.
      parts.push_back(s.substr(i));
      return parts;
    }
    const size_t start = i;
    while (i < s.size()) {
      size_t next = i;
      if (utf8::IsSpace(utf8::Next(s, next))) break;
      i = next;
    }
    parts.push_back(s.substr(start, i - start));
    skip_space();
  }
  return parts;
}

class StringSplit final : public OpKernel {
 public:
  explicit StringSplit(const KernelInfo& info)
      : delimiter_(info.GetStringOr("delimiter", "")), maxsplit_(info.GetIntOr("maxsplit", -1)) {
    if (info.HasAttr("maxsplit") && maxsplit_ < 0) info.Fail(StrCat("maxsplit must not be negative, got ", maxsplit_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() != DataType::kString) ctx.Fail("the input must be a string tensor");
    const std::string* in = x.data<std::string>();
    std::vector<std::vector<std::string>> splits(static_cast<size_t>(x.size()));
    int64_t longest = 0;
    for (int64_t i = 0; i < x.size(); ++i) {
      splits[i] = delimiter_.empty() ? SplitWhitespace(in[i], maxsplit_) : SplitOn(in[i], delimiter_, maxsplit_);
      longest = std::max<int64_t>(longest, static_cast<int64_t>(splits[i].size()));
    }
    Shape y_shape = x.shape();
    y_shape.push_back(longest);
    Tensor& y = ctx.AllocateOutput(0, DataType::kString, y_shape);
    Tensor& z = ctx.AllocateOutput(1, DataType::kInt64, x.shape());
    for (int64_t i = 0; i < x.size(); ++i) {
      z.data<int64_t>()[i] = static_cast<int64_t>(splits[i].size());
      for (size_t k = 0; k < splits[i].size(); ++k) y.data<std::string>()[i * longest + k] = std::move(splits[i][k]);
    }
  }

 private:
  std::string delimiter_;
  int64_t maxsplit_;
};

ONYX_CPU_KERNEL("StringSplit", 20, kOpsetMax, StringSplit);

}  // namespace
}  // namespace onyx
