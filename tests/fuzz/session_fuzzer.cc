// libFuzzer harness for the whole engine: bytes -> Session (loader, validation, shape
// inference, every optimizer pass, partitioning, planning, kernel creation) -> Run on feeds
// derived from the same bytes. Any input either runs or throws onyx::Error; anything else (a
// crash, a sanitizer report, another exception) is a bug.
//
// The whole input is the model, so the structure-aware mutator (model_mutator.cc) edits it as
// one; the choices a case needs besides the model (optimization level, symbolic dim sizes,
// feed values) come from a hash of the bytes and from the bytes themselves. Limits keep one
// case to a few MB and about a second: small loader limits, an arena cap, feeds of at most
// kMaxFeedElements, and a watchdog that sets RunOptions::terminate after kRunMillis.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "fuzz_bytes.h"
#include "onyx/session.h"

namespace {

constexpr int64_t kMaxFeedElements = 4096;
constexpr int64_t kMaxSymbolicDim = 4;
constexpr auto kRunMillis = std::chrono::milliseconds(1000);

// One thread for the process: sets the armed flag once its deadline passes.
class Watchdog {
 public:
  static Watchdog& Get() {
    static Watchdog* watchdog = new Watchdog;  // lives as long as the process
    return *watchdog;
  }
  void Arm(std::shared_ptr<std::atomic<bool>> flag) {
    std::lock_guard<std::mutex> lock(mutex_);
    flag_ = std::move(flag);
    deadline_ = std::chrono::steady_clock::now() + kRunMillis;
    wake_.notify_one();
  }
  void Disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    flag_.reset();
  }

 private:
  Watchdog() { std::thread([this] { Loop(); }).detach(); }
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (!flag_) {
        wake_.wait(lock);
      } else if (std::chrono::steady_clock::now() >= deadline_) {
        flag_->store(true);
        flag_.reset();
      } else {
        wake_.wait_until(lock, deadline_);
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<std::atomic<bool>> flag_;
  std::chrono::steady_clock::time_point deadline_;
};

// Feed choices: dims and values drawn from the case's bytes (cycled from a hashed offset).
class FeedMaker {
 public:
  FeedMaker(const uint8_t* data, size_t size, uint64_t seed) : data_(data), size_(size), pos_(size ? seed % size : 0) {}

  uint8_t Next() {
    if (size_ == 0) return 0;
    const uint8_t b = data_[pos_];
    pos_ = (pos_ + 1) % size_;
    return b;
  }

  // Concrete dims for a declared shape: known dims as declared, each symbol one small size for
  // the whole case, unknown dims and unknown ranks small. False when the shape is too large.
  bool Dims(const std::optional<std::vector<onyx::Dim>>& declared, onyx::Shape& shape) {
    shape.clear();
    if (!declared) {
      for (int r = Next() % 4; r > 0; --r) shape.push_back(1 + Next() % kMaxSymbolicDim);
    } else {
      for (const onyx::Dim& d : *declared) {
        if (d.known()) {
          shape.push_back(d.value);
        } else if (!d.param.empty()) {
          auto it = symbols_.find(d.param);
          if (it == symbols_.end()) it = symbols_.emplace(d.param, Next() % (kMaxSymbolicDim + 1)).first;
          shape.push_back(it->second);
        } else {
          shape.push_back(1 + Next() % kMaxSymbolicDim);
        }
      }
    }
    int64_t elements = 1;
    for (int64_t d : shape) {
      if (d > kMaxFeedElements) return false;
      elements *= d;
      if (elements > kMaxFeedElements) return false;
    }
    return true;
  }

  std::optional<onyx::Value> Tensor(onyx::DataType dtype, const std::optional<std::vector<onyx::Dim>>& declared) {
    if (dtype == onyx::DataType::kUndefined) return std::nullopt;
    onyx::Shape shape;
    if (!Dims(declared, shape)) return std::nullopt;
    onyx::Tensor t(dtype, shape);
    if (dtype == onyx::DataType::kString) {
      for (int64_t i = 0; i < t.size(); ++i) {
        std::string& s = t.data<std::string>()[i];
        for (int n = Next() % 8; n > 0; --n) s.push_back(static_cast<char>(Next()));
      }
      return onyx::Value(std::move(t));
    }
    auto* bytes = static_cast<uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.byte_size(); ++i) bytes[i] = Next();
    if (dtype == onyx::DataType::kBool)  // a bool holds 0 or 1, as numpy's do
      for (int64_t i = 0; i < t.byte_size(); ++i) bytes[i] &= 1;
    return onyx::Value(std::move(t));
  }

  std::optional<onyx::Value> Value(const onyx::TypeInfo* type, int depth) {
    if (type == nullptr || depth > 4) return std::nullopt;
    using Kind = onyx::TypeInfo::Kind;
    switch (type->kind) {
      case Kind::kTensor: return Tensor(type->elem_type, type->shape);
      case Kind::kOptional:
        if (Next() % 2 == 0) return onyx::Value::None(type->elem);
        return Value(type->elem.get(), depth + 1);
      case Kind::kSequence: {
        std::vector<onyx::Value> elements;
        for (int n = Next() % 3; n > 0; --n) {
          auto e = Value(type->elem.get(), depth + 1);
          if (!e) return std::nullopt;
          elements.push_back(std::move(*e));
        }
        return onyx::Value::Sequence(std::move(elements), type->elem);
      }
      case Kind::kMap: {
        if (!type->elem || type->elem->kind != Kind::kTensor) return std::nullopt;
        const int64_t n = Next() % 4;
        auto keys = Tensor(type->elem_type, std::vector<onyx::Dim>{onyx::Dim{n, ""}});
        auto values = Tensor(type->elem->elem_type, std::vector<onyx::Dim>{onyx::Dim{n, ""}});
        if (!keys || !values) return std::nullopt;
        return onyx::Value::Map(keys->tensor(), values->tensor());
      }
      default: return std::nullopt;
    }
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_;
  std::map<std::string, int64_t> symbols_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint64_t seed = onyx::fuzz::HashBytes(data, size);
  static const onyx::GraphOptimizationLevel kLevels[] = {
      onyx::GraphOptimizationLevel::kAll, onyx::GraphOptimizationLevel::kAll, onyx::GraphOptimizationLevel::kExtended,
      onyx::GraphOptimizationLevel::kBasic, onyx::GraphOptimizationLevel::kDisabled};
  onyx::SessionOptions options;
  options.graph_optimization_level = kLevels[seed % 5];
  options.intra_op_num_threads = 1;
  options.inter_op_num_threads = 1;
  options.cpu_arena_max_bytes = size_t{64} << 20;
  options.log_severity_level = 4;
  options.config_entries["onyx.loader.max_elements"] = "262144";  // 1 MiB of float32 per tensor
  options.config_entries["onyx.loader.max_dim"] = "262144";
  options.config_entries["onyx.loader.max_rank"] = "16";
  try {
    onyx::Session session(data, size, options);
    FeedMaker maker(data, size, seed >> 8);
    onyx::NamedValues feeds;
    for (const onyx::IoInfo& input : session.inputs()) {
      auto value = maker.Value(input.type.get(), 0);
      if (!value) return 0;  // an input this harness cannot make within its limits
      feeds.emplace_back(input.name, std::move(*value));
    }
    onyx::RunOptions run_options;
    run_options.log_severity_level = 4;
    Watchdog::Get().Arm(run_options.terminate);
    try {
      session.Run(feeds, {}, run_options);
    } catch (...) {
      Watchdog::Get().Disarm();
      throw;
    }
    Watchdog::Get().Disarm();
  } catch (const onyx::Error&) {
  }
  return 0;
}
