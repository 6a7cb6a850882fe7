// Soak: T threads (8) each make R Runs (ONYX_SOAK_RUNS; 1000 at full size) on one session at
// once, and every output equals, bit for bit, what the serial Run of the same session gave for
// the same input. The inputs come from a pool of 2T + 1 seeded feeds (of more than one shape
// where the model's dims are symbolic) and thread t's run i takes feed (i * T + t) mod (2T + 1):
// threads running side by side have different inputs and a thread's consecutive Runs differ, so a
// Run that reads or writes another's buffers shows. The serial outputs are themselves checked
// against ONNX Runtime by tests/soak/test_soak_python.py.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <mutex>
#include <thread>

#include "model_builder.h"
#include "onyx/session.h"
#include "runtime/session_impl.h"
#include "soak_util.h"

namespace onyx {
namespace {

using FeedMaker = std::function<NamedValues(int index, uint64_t seed)>;

void SoakConcurrent(const std::string& label, const Session& session, const FeedMaker& make_feeds, int64_t ci_runs) {
  const int threads = soak::SoakThreads();
  const int64_t runs = soak::SoakRuns(ci_runs);
  const int pool_size = 2 * threads + 1;
  std::vector<NamedValues> pool;
  std::vector<std::vector<Value>> serial;
  for (int k = 0; k < pool_size; ++k) {
    pool.push_back(make_feeds(k, 1000 + static_cast<uint64_t>(k)));
    serial.push_back(session.Run(pool.back()));
  }
  // The pool's inputs give different outputs (else a Run returning another's result would pass).
  std::string why;
  ASSERT_FALSE(soak::BitEqual(serial[0], serial[1], &why)) << label << ": feeds 0 and 1 give the same outputs";

  std::atomic<int64_t> mismatches{0}, failures{0};
  std::mutex first_mutex;
  std::string first;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int64_t i = 0; i < runs; ++i) {
        const size_t k = static_cast<size_t>((i * threads + t) % pool_size);
        std::string detail;
        try {
          if (soak::BitEqual(session.Run(pool[k]), serial[k], &detail)) continue;
          ++mismatches;
        } catch (const std::exception& e) {
          ++failures;
          detail = e.what();
        }
        std::lock_guard<std::mutex> lock(first_mutex);
        if (first.empty()) first = "thread " + std::to_string(t) + " run " + std::to_string(i) + " feed " +
                                   std::to_string(k) + ": " + detail;
      }
    });
  }
  for (auto& w : workers) w.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[soak] " << label << ": " << threads << " threads x " << runs << " runs (" << pool_size
            << " feeds): " << mismatches.load() << " mismatches, " << failures.load() << " failures, " << seconds
            << " s\n";
  EXPECT_EQ(mismatches.load(), 0) << first;
  EXPECT_EQ(failures.load(), 0) << first;
  // Every Run's memory went back: nothing is in use once the outputs are dropped.
  serial.clear();
  if (session.impl().arena() != nullptr) {
    EXPECT_EQ(session.impl().arena()->stats().in_use, 0u) << label;
  }
}

// Two branches (MatMul -> Relu, MatMul -> Sigmoid) joined by Concat, a third MatMul, a residual
// Add and a Softmax, over [batch, seq, 16] with both dims symbolic.
std::string BranchyModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, -1, 16}).Output("y", DataType::kFloat, {-1, -1, 16});
  b.Initializer("w1", test::FloatTensor({16, 24}, -0.5f, 1.0f / 384));
  b.Initializer("w2", test::FloatTensor({16, 24}, 0.5f, -1.0f / 384));
  b.Initializer("w3", test::FloatTensor({48, 16}, -0.3f, 0.6f / 768));
  b.Node("MatMul", {"x", "w1"}, {"a1"});
  b.Node("Relu", {"a1"}, {"r1"});
  b.Node("MatMul", {"x", "w2"}, {"a2"});
  b.Node("Sigmoid", {"a2"}, {"r2"});
  b.Node("Concat", {"r1", "r2"}, {"c"}).attributes.push_back(test::IntAttr("axis", -1));
  b.Node("MatMul", {"c", "w3"}, {"m"});
  b.Node("Add", {"m", "x"}, {"s"});
  b.Node("Softmax", {"s"}, {"y"}).attributes.push_back(test::IntAttr("axis", -1));
  return b.Bytes();
}

NamedValues BranchyFeeds(int index, uint64_t seed) {
  const int64_t seq = index % 3 == 0 ? 3 : index % 3 == 1 ? 8 : 17;
  return {{"x", soak::RandomTensor(DataType::kFloat, {2, seq, 16}, seed)}};
}

TEST(Soak, BuiltInModelSequentialAndParallelExecution) {
  const std::string model = BranchyModel();
  for (ExecutionMode mode : {ExecutionMode::kSequential, ExecutionMode::kParallel}) {
    SessionOptions options;
    options.intra_op_num_threads = 2;
    options.execution_mode = mode;
    options.inter_op_num_threads = 2;
    Session s(model.data(), model.size(), options);
    SoakConcurrent(mode == ExecutionMode::kSequential ? "branchy (sequential)" : "branchy (parallel)", s,
                   BranchyFeeds, 60);
  }
}

// A real model of ../shared, run with two intra-op threads shared by the callers.
void SoakRealModel(const std::string& file, const FeedMaker& make_feeds, int64_t ci_runs) {
  const std::string path = soak::RealModel(file);
  if (path.empty()) GTEST_SKIP() << "../shared/models/real/" << file << " is absent (set ONYX_SHARED_DIR)";
  SessionOptions options;
  options.intra_op_num_threads = 2;
  Session s(path, options);
  SoakConcurrent(file, s, make_feeds, ci_runs);
}

Shape ImageShape(int index, int64_t height, std::initializer_list<int64_t> widths) {
  const auto w = widths.begin()[static_cast<size_t>(index) % widths.size()];
  return {1, 3, height, w};
}

TEST(Soak, PaddleOcrDirectionClassifier) {
  SoakRealModel("ch_ppocr_mobile_v2.0_cls_infer.onnx", [](int index, uint64_t seed) {
    return NamedValues{{"x", soak::RandomTensor(DataType::kFloat, ImageShape(index, 48, {192, 96}), seed)}};
  }, 12);
}

TEST(Soak, PaddleOcrRecognizer) {
  SoakRealModel("ch_PP-OCRv4_rec_infer.onnx", [](int index, uint64_t seed) {
    return NamedValues{{"x", soak::RandomTensor(DataType::kFloat, ImageShape(index, 48, {160, 96}), seed)}};
  }, 3);
}

TEST(Soak, PaddleOcrDetector) {
  SoakRealModel("ch_PP-OCRv4_det_infer.onnx", [](int index, uint64_t seed) {
    return NamedValues{{"x", soak::RandomTensor(DataType::kFloat, ImageShape(index, 96, {96, 64}), seed)}};
  }, 3);
}

TEST(Soak, SileroVadIfAndLstm) {
  SoakRealModel("silero_vad_v5.onnx", [](int, uint64_t seed) {
    return NamedValues{{"input", soak::RandomTensor(DataType::kFloat, {1, 512}, seed)},
                       {"state", soak::RandomTensor(DataType::kFloat, {2, 1, 128}, seed + 7)},
                       {"sr", soak::ScalarInt64(16000)}};
  }, 12);
}

}  // namespace
}  // namespace onyx
