// Memory bound: R Runs (ONYX_SOAK_RUNS; 1000 at full size) with random input shapes keep the
// arena and the process under the bound docs/memory.md gives in terms of P, the largest shape's
// planned peak: what a fresh session's arena reserves at most over two Runs of the largest shape
// (its intermediates' high-water mark and its outputs). The arena must reserve at most
// kPeakFactor * P at any time and hold at most kIdleFactor * P between Runs; the process's
// resident memory must grow by at most kPeakFactor * P plus a fixed allowance for what is not
// the arena's (thread stacks, kernels' own scratch, the C library's caches).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>
#include <random>

#include "bert_like_model.h"
#include "onyx/session.h"
#include "runtime/session_impl.h"
#include "soak_util.h"

namespace onyx {
namespace {

// docs/memory.md: idle pattern blocks <= 2P, cached output blocks <= P, one Run in flight <= P.
constexpr int64_t kIdleFactor = 3;
constexpr int64_t kPeakFactor = 4;
constexpr int64_t kNotArenaBytes = int64_t{32} << 20;

using SessionMaker = std::function<std::unique_ptr<Session>()>;
using FeedMaker = std::function<NamedValues(std::mt19937_64&)>;

void RandomShapeSoak(const std::string& label, const SessionMaker& make, const NamedValues& smallest,
                     const NamedValues& largest, const FeedMaker& random_feeds, int64_t ci_runs) {
  const int64_t runs = soak::SoakRuns(ci_runs);
  int64_t planned_peak = 0;
  {
    auto fresh = make();
    fresh->Run(largest);
    fresh->Run(largest);
    planned_peak = static_cast<int64_t>(fresh->impl().arena()->stats().peak_reserved);
  }
  auto session = make();
  session->Run(smallest);  // first-touch of weights, thread stacks, kernel caches
  const int64_t rss_base = soak::CurrentRssBytes();
  const bool reset = soak::ResetPeakRss();
  std::mt19937_64 rng(17);
  for (int64_t i = 0; i < runs; ++i) session->Run(i == runs / 2 ? largest : random_feeds(rng));
  const int64_t rss_peak = reset ? soak::PeakRssSinceResetBytes() : soak::PeakRssBytes();
  const ArenaAllocator::Stats stats = session->impl().arena()->stats();
  std::cout << "[soak] " << label << ": " << runs << " random-shape runs; P = " << soak::Mib(planned_peak)
            << " MiB; arena peak " << soak::Mib(static_cast<int64_t>(stats.peak_reserved)) << " MiB ("
            << static_cast<double>(stats.peak_reserved) / static_cast<double>(planned_peak) << " P), held after "
            << soak::Mib(static_cast<int64_t>(stats.reserved)) << " MiB (idle patterns "
            << soak::Mib(static_cast<int64_t>(stats.idle_pattern_bytes)) << " MiB); resident "
            << soak::Mib(rss_base) << " MiB before, peak " << soak::Mib(rss_peak) << " MiB (+"
            << soak::Mib(rss_peak - rss_base) << " MiB" << (reset ? "" : ", peak since the process began")
            << ")\n";
  EXPECT_EQ(stats.in_use, 0u);
  EXPECT_LE(static_cast<int64_t>(stats.peak_reserved), kPeakFactor * planned_peak);
  EXPECT_LE(static_cast<int64_t>(stats.reserved), kIdleFactor * planned_peak);
#if !ONYX_SOAK_ASAN  // AddressSanitizer's quarantine of freed memory inflates resident memory
  EXPECT_LE(rss_peak - rss_base, kPeakFactor * planned_peak + kNotArenaBytes);
#endif
}

TEST(MemoryBound, BertLikeRandomBatchAndSequence) {
  const std::string model = soak::BertLikeModel();
  auto ids = [](int64_t batch, int64_t seq, uint64_t seed) {
    return NamedValues{{"input_ids", soak::RandomTensor(DataType::kInt64, {batch, seq}, seed)}};
  };
  RandomShapeSoak(
      "bert-like", [&] { return std::make_unique<Session>(model.data(), model.size()); }, ids(1, 1, 1),
      ids(8, 256, 2),
      [&](std::mt19937_64& rng) {
        return ids(1 + static_cast<int64_t>(rng() % 8), 1 + static_cast<int64_t>(rng() % 256), rng());
      },
      60);
}

TEST(MemoryBound, PaddleOcrDetectorRandomHeightAndWidth) {
  const std::string path = soak::RealModel("ch_PP-OCRv4_det_infer.onnx");
  if (path.empty()) GTEST_SKIP() << "../shared/models/real/ch_PP-OCRv4_det_infer.onnx is absent (set ONYX_SHARED_DIR)";
  auto image = [](int64_t h, int64_t w, uint64_t seed) {
    return NamedValues{{"x", soak::RandomTensor(DataType::kFloat, {1, 3, h, w}, seed)}};
  };
  RandomShapeSoak(
      "PP-OCRv4 det", [&] { return std::make_unique<Session>(path); }, image(32, 32, 1), image(256, 256, 2),
      [&](std::mt19937_64& rng) {
        return image(32 * (1 + static_cast<int64_t>(rng() % 8)), 32 * (1 + static_cast<int64_t>(rng() % 8)), rng());
      },
      12);
}

}  // namespace
}  // namespace onyx
