// NchwcScaleChannels cuts big planes into pixel runs: every output stays x * s of its own
// channel at 1, 2 and 3 threads, for block counts that do not divide among the threads and
// pixel counts that do not divide into the runs. Reference: the scalar product per element.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "linalg/pool_nchwc.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

TEST(ScaleChannelsSplit, PixelRunsGiveEachOutputItsOwnProduct) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int block : {8, 16})
      for (auto [n, blocks, pixels] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 12544}, {1, 3, 1001},
                                       {2, 1, 257}, {1, 2, 3136}, {1, 5, 255}}) {
        const int64_t total = n * blocks * pixels * block;
        std::vector<float> x(static_cast<size_t>(total)), s(static_cast<size_t>(n * blocks * block));
        for (float& v : x) v = dist(rng);
        for (float& v : s) v = dist(rng);
        std::vector<float> got(x.size(), 123.0f);
        NchwcScaleChannels(n, blocks * block, pixels, block, x.data(), s.data(), got.data(), &pool);
        const std::string what = "threads " + std::to_string(threads) + " block " + std::to_string(block) +
                                 " n" + std::to_string(n) + " blocks " + std::to_string(blocks) + " pixels " +
                                 std::to_string(pixels);
        for (int64_t plane = 0; plane < n * blocks; ++plane)
          for (int64_t p = 0; p < pixels; ++p)
            for (int64_t c = 0; c < block; ++c) {
              const int64_t i = (plane * pixels + p) * block + c;
              ASSERT_EQ(got[i], x[i] * s[plane * block + c]) << what << " at " << i;
            }
      }
  }
}

}  // namespace
}  // namespace onyx::linalg
