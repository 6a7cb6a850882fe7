// Leaks: N Runs (ONYX_SOAK_LEAK_RUNS; 10,000 at full size) leak nothing. Mixed in are Runs that
// fail (a feed of the wrong type, rank or name, a missing feed, a kernel that fails after others
// allocated, a tensor over onyx.run.max_tensor_bytes, a terminated Run, an If branch that fails
// inside Silero VAD), Runs into the caller's buffers, arena shrinks, and sessions created and
// destroyed (some failing to be created). Under AddressSanitizer (the sanitize preset) LeakSanitizer
// must find nothing; in every build the arena must hold no bytes in use afterwards and the
// resident memory must stop growing after a warm-up (a tenth of the Runs, at least 300).
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <string>

#include "model_builder.h"
#include "onyx/session.h"
#include "runtime/session_impl.h"
#include "soak_util.h"

#if ONYX_SOAK_ASAN
#include <sanitizer/lsan_interface.h>
#endif

namespace onyx {
namespace {

// MatMul -> Relu -> Add(., z) -> Softmax over [batch, seq, 16]; a z that does not broadcast
// fails the Add after the MatMul and Relu took memory.
std::string FailingAddModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, -1, 16}).Input("z", DataType::kFloat, {-1, -1, -1});
  b.Output("y", DataType::kFloat, {-1, -1, 32});
  b.Initializer("w", test::FloatTensor({16, 32}, -0.5f, 1.0f / 512));
  b.Node("MatMul", {"x", "w"}, {"a"});
  b.Node("Relu", {"a"}, {"r"});
  b.Node("Add", {"r", "z"}, {"s"});
  b.Node("Softmax", {"s"}, {"y"}).attributes.push_back(test::IntAttr("axis", -1));
  return b.Bytes();
}

std::string ExpandModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1}).Input("shape", DataType::kInt64, {2}).Output("y", DataType::kFloat, {-1, -1});
  b.Node("Expand", {"x", "shape"}, {"y"});
  return b.Bytes();
}

template <typename F>
bool Fails(F&& run) {
  try {
    run();
  } catch (const Error&) {
    return true;
  }
  return false;
}

class LeakSoak : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = FailingAddModel();
    expand_ = ExpandModel();
    silero_path_ = soak::RealModel("silero_vad_v5.onnx");
  }

  NamedValues Feeds(int64_t i, bool bad_z = false) const {
    const int64_t seq = 1 + i % 7;
    return {{"x", soak::RandomTensor(DataType::kFloat, {2, seq, 16}, static_cast<uint64_t>(i))},
            {"z", soak::RandomTensor(DataType::kFloat, {1, seq, bad_z ? 31 : 32}, static_cast<uint64_t>(i) + 1)}};
  }

  // One failing Run of kind i % 8 on `s` (or on the Expand or Silero session); true when it failed.
  bool FailingRun(int64_t i, const Session& s, const Session& expand, const Session* silero) const {
    NamedValues feeds = Feeds(i);
    switch (i % 8) {
      case 0:
        feeds[0].second = soak::RandomTensor(DataType::kInt64, {2, 3, 16}, 1);  // wrong type
        return Fails([&] { s.Run(feeds); });
      case 1:
        feeds[0].second = soak::RandomTensor(DataType::kFloat, {2, 16}, 1);  // wrong rank
        return Fails([&] { s.Run(feeds); });
      case 2:
        feeds.emplace_back("no_such_input", Value(test::FloatTensor({1})));
        return Fails([&] { s.Run(feeds); });
      case 3:
        feeds.pop_back();  // z missing
        return Fails([&] { s.Run(feeds); });
      case 4:
        return Fails([&] { s.Run(Feeds(i, /*bad_z=*/true)); });  // the Add fails mid-Run
      case 5: {
        RunOptions stop;
        stop.terminate->store(true);
        return Fails([&] { s.Run(feeds, {}, stop); });
      }
      case 6:
        return Fails([&] {
          expand.Run({{"x", test::FloatTensor({1})},
                      {"shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {int64_t{1} << 20, int64_t{1} << 20})}});
        });
      default:
        if (silero == nullptr) return Fails([&] { s.Run({}); });
        // sr other than 8000 or 16000 takes the If branch that fails by design.
        return Fails([&] {
          silero->Run({{"input", soak::RandomTensor(DataType::kFloat, {1, 512}, 3)},
                       {"state", soak::RandomTensor(DataType::kFloat, {2, 1, 128}, 4)},
                       {"sr", soak::ScalarInt64(12345)}});
        });
    }
  }

  std::string model_, expand_, silero_path_;
};

TEST_F(LeakSoak, RunsFailuresAndSessionCyclesLeakNothing) {
  const int64_t runs = soak::LeakRuns(600);
  SessionOptions parallel;
  parallel.execution_mode = ExecutionMode::kParallel;
  parallel.intra_op_num_threads = 2;
  auto session = std::make_unique<Session>(model_.data(), model_.size(), parallel);
  auto expand = std::make_unique<Session>(expand_.data(), expand_.size());
  std::unique_ptr<Session> silero;
  if (!silero_path_.empty()) silero = std::make_unique<Session>(silero_path_);
  else std::cout << "[soak] ../shared/models/real/silero_vad_v5.onnx is absent: no Silero Runs\n";

  // Warm-up: the first Runs of each kind, the first session cycles (their threads' C library
  // arenas) take memory once.
  const int64_t warmup = std::min(runs / 2, std::max<int64_t>(runs / 10, 300));
  int64_t failed = 0, expected_failures = 0, cycles = 0, rss_after_warmup = 0;
  for (int64_t i = 0; i < runs; ++i) {
    if (i == warmup) rss_after_warmup = soak::CurrentRssBytes();
    if (i % 10 == 3) {
      ++expected_failures;
      const bool did_fail = FailingRun(i / 10, *session, *expand, silero.get());
      EXPECT_TRUE(did_fail) << "failure kind " << (i / 10) % 8 << " (run " << i << ") did not fail";
      failed += did_fail ? 1 : 0;
      continue;
    }
    if (i % 100 == 42) {
      // A session made and dropped, with other options each time, and one that cannot be made.
      SessionOptions options;
      options.enable_cpu_mem_arena = cycles % 2 == 0;
      options.enable_mem_pattern = options.enable_cpu_mem_arena && cycles % 3 != 0;
      options.intra_op_num_threads = 1 + static_cast<int>(cycles % 2);
      Session cycle(model_.data(), model_.size(), options);
      ASSERT_EQ(cycle.Run(Feeds(i))[0].tensor().dim(2), 32);
      const std::string truncated = model_.substr(0, model_.size() / 2);
      EXPECT_TRUE(Fails([&] { Session bad(truncated.data(), truncated.size()); }));
      SessionOptions unknown_key;
      unknown_key.config_entries["onyx.no_such_key"] = "1";
      EXPECT_TRUE(Fails([&] { Session bad(model_.data(), model_.size(), unknown_key); }));
      ++cycles;
      continue;
    }
    if (silero != nullptr && i % 10 == 5) {
      const auto out = silero->Run({{"input", soak::RandomTensor(DataType::kFloat, {1, 512}, static_cast<uint64_t>(i))},
                                    {"state", soak::RandomTensor(DataType::kFloat, {2, 1, 128}, 9)},
                                    {"sr", soak::ScalarInt64(16000)}});
      ASSERT_EQ(out.size(), 2u);
      continue;
    }
    RunOptions run_options;
    run_options.shrink_arena_after_run = i % 50 == 7;
    const NamedValues feeds = Feeds(i);
    if (i % 25 == 11) {
      // Into the caller's buffer (IO binding).
      const int64_t seq = feeds[0].second.tensor().dim(1);
      Tensor buffer(DataType::kFloat, {2, seq, 32});
      const auto out = session->Run(feeds, {"y"}, {Value(buffer)}, run_options);
      ASSERT_TRUE(out[0].tensor().SharesStorageWith(buffer));
      continue;
    }
    const auto out = session->Run(feeds, {}, run_options);
    ASSERT_EQ(out[0].tensor().shape(), (Shape{2, 1 + i % 7, 32}));
  }
  EXPECT_EQ(session->impl().arena()->stats().in_use, 0u);
  EXPECT_EQ(expand->impl().arena()->stats().in_use, 0u);
  const int64_t rss_end = soak::CurrentRssBytes();
  std::cout << "[soak] leak: " << runs << " runs (" << failed << " failing, " << cycles
            << " session cycles): resident " << soak::Mib(rss_after_warmup) << " MiB after " << warmup << " runs, "
            << soak::Mib(rss_end) << " MiB at the end\n";
  session.reset();
  expand.reset();
  silero.reset();
#if ONYX_SOAK_ASAN
  // Everything the Runs and sessions allocated is gone (LeakSanitizer checks again at exit).
  EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0) << "LeakSanitizer found leaks (above)";
#else
  // The quarantine of freed memory makes resident memory meaningless under AddressSanitizer;
  // elsewhere, after warm-up it must not grow by more than allocator noise.
  EXPECT_LT(rss_end - rss_after_warmup, int64_t{8} << 20)
      << "resident memory grew from " << soak::Mib(rss_after_warmup) << " to " << soak::Mib(rss_end) << " MiB";
#endif
}

}  // namespace
}  // namespace onyx
