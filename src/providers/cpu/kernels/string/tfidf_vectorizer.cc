// TfIdfVectorizer (opset 9): counts, per row of a [C] or [N, C] int32/int64/string input, the
// n-grams of a fixed pool (attributes), optionally with skips between the items of an n-gram,
// and weighs the counts (TF, IDF or TFIDF). Output: float [max(ngram_indexes) + 1] or [N, ...].
#include <algorithm>
#include <unordered_map>

#include "providers/kernel.h"

namespace onyx {
namespace {

enum class Weighting { kTf, kIdf, kTfIdf };

// An n-gram as a key: the items joined with a separator that keeps them apart (strings are
// length-prefixed, numbers written in full).
template <typename Item>
void AppendKey(std::string& key, const Item& item) {
  if constexpr (std::is_same_v<Item, std::string>) {
    key += std::to_string(item.size());
    key += ':';
    key += item;
  } else {
    key += std::to_string(static_cast<int64_t>(item));
    key += ',';
  }
}

class TfIdfVectorizer final : public OpKernel {
 public:
  explicit TfIdfVectorizer(const KernelInfo& info) {
    min_n_ = info.GetInt("min_gram_length");
    max_n_ = info.GetInt("max_gram_length");
    max_skip_ = info.GetInt("max_skip_count");
    if (min_n_ < 1 || max_n_ < min_n_)
      info.Fail(StrCat("need 1 <= min_gram_length <= max_gram_length, got ", min_n_, " and ", max_n_));
    if (max_skip_ < 0) info.Fail("max_skip_count must not be negative");
    const std::string mode = info.GetString("mode");
    if (mode == "TF") weighting_ = Weighting::kTf;
    else if (mode == "IDF") weighting_ = Weighting::kIdf;
    else if (mode == "TFIDF") weighting_ = Weighting::kTfIdf;
    else info.Fail(StrCat("mode must be TF, IDF or TFIDF, got '", mode, "'"));
    const auto counts = info.GetInts("ngram_counts");
    const auto indexes = info.GetInts("ngram_indexes");
    weights_ = info.GetFloatsOr("weights", {});
    const auto pool_ints = info.GetIntsOr("pool_int64s", {});
    const auto pool_strings = info.GetStringsOr("pool_strings", {});
    if (!pool_ints.empty() && !pool_strings.empty()) info.Fail("give pool_int64s or pool_strings, not both");
    strings_ = !pool_strings.empty();
    const int64_t total = static_cast<int64_t>(strings_ ? pool_strings.size() : pool_ints.size());
    for (int64_t i : indexes)
      if (i < 0) info.Fail("ngram_indexes must not be negative");
    output_size_ = indexes.empty() ? 0 : *std::max_element(indexes.begin(), indexes.end()) + 1;
    if (!weights_.empty() && static_cast<int64_t>(weights_.size()) < output_size_)
      info.Fail(StrCat("weights has ", weights_.size(), " entries but the output has ", output_size_));
    // ngram_counts[k]: where the (k+1)-grams start in the pool.
    int64_t gram_id = 0;
    for (size_t k = 0; k < counts.size(); ++k) {
      const int64_t n = static_cast<int64_t>(k) + 1;
      const int64_t begin = counts[k];
      const int64_t end = k + 1 < counts.size() ? counts[k + 1] : total;
      if (begin < 0 || end < begin || end > total || (end - begin) % n != 0)
        info.Fail(StrCat("ngram_counts ", StrJoin(counts), " do not fit a pool of ", total, " items"));
      for (int64_t at = begin; at < end; at += n, ++gram_id) {
        if (gram_id >= static_cast<int64_t>(indexes.size()))
          info.Fail("ngram_indexes has fewer entries than the pool has n-grams");
        if (n < min_n_ || n > max_n_) continue;
        std::string key;
        for (int64_t j = 0; j < n; ++j) {
          if (strings_) AppendKey(key, pool_strings[at + j]);
          else AppendKey(key, pool_ints[at + j]);
        }
        grams_.emplace(std::move(key), indexes[gram_id]);
      }
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const DataType dt = x.dtype();
    if (strings_ ? dt != DataType::kString : (dt != DataType::kInt32 && dt != DataType::kInt64))
      ctx.Fail(strings_ ? "the pool holds strings, so the input must be a string tensor"
                        : "the pool holds integers, so the input must be int32 or int64");
    int64_t rows = 1, cols = 0;
    Shape out_shape;
    if (x.rank() <= 1) {
      cols = x.size();
      out_shape = {output_size_};
    } else if (x.rank() == 2) {
      rows = x.dim(0);
      cols = x.dim(1);
      out_shape = {rows, output_size_};
    } else {
      ctx.Fail("the input must have shape [C] or [N, C]");
    }
    std::vector<int64_t> freq(static_cast<size_t>(rows * output_size_), 0);
    for (int64_t r = 0; r < rows; ++r) {
      if (dt == DataType::kString) CountRow(x.data<std::string>() + r * cols, cols, freq.data() + r * output_size_);
      else if (dt == DataType::kInt32) CountRow(x.data<int32_t>() + r * cols, cols, freq.data() + r * output_size_);
      else CountRow(x.data<int64_t>() + r * cols, cols, freq.data() + r * output_size_);
    }
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, out_shape);
    float* out = y.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < output_size_; ++i) {
        const int64_t f = freq[r * output_size_ + i];
        float v = 0.0f;
        switch (weighting_) {
          case Weighting::kTf: v = static_cast<float>(f); break;
          case Weighting::kIdf: v = f > 0 ? (weights_.empty() ? 1.0f : weights_[i]) : 0.0f; break;
          case Weighting::kTfIdf:
            v = weights_.empty() ? static_cast<float>(f) : weights_[i] * static_cast<float>(f);
            break;
        }
        out[r * output_size_ + i] = v;
      }
    }
  }

 private:
  // For each skip distance, each start and each length, looks the n-gram up. Unigrams do not
  // depend on the skip, so they are counted in the first pass only.
  template <typename Item>
  void CountRow(const Item* row, int64_t cols, int64_t* freq) const {
    int64_t min_n = min_n_;
    for (int64_t skip = 1; skip - 1 <= max_skip_; ++skip) {
      // Past this skip no n-gram of min_n items fits in the row: a max_skip_count of 2^62 (a
      // fuzzed model) looped that long here.
      if (min_n > 1 && skip > (cols - 1) / (min_n - 1)) break;
      for (int64_t start = 0; start < cols; ++start) {
        if (start + skip * (min_n - 1) >= cols) break;
        std::string key;
        for (int64_t n = 1; n <= max_n_; ++n) {
          const int64_t at = start + (n - 1) * skip;
          if (at >= cols) break;
          AppendKey(key, row[at]);
          if (n < min_n) continue;
          auto it = grams_.find(key);
          if (it != grams_.end()) ++freq[it->second];
        }
      }
      if (min_n == 1) {
        if (++min_n > max_n_) break;
      }
    }
  }

  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0;
  Weighting weighting_ = Weighting::kTf;
  bool strings_ = false;
  int64_t output_size_ = 0;
  std::vector<float> weights_;
  std::unordered_map<std::string, int64_t> grams_;  // n-gram key -> output index
};

ONYX_CPU_KERNEL("TfIdfVectorizer", 9, kOpsetMax, TfIdfVectorizer);

}  // namespace
}  // namespace onyx
