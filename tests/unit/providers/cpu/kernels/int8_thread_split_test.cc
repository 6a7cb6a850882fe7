// The int8 kernels that ran serially at 2 threads and now split over the intra-op pool:
// QGemm's one-row product (the classifier, linalg Q8Gemv), broadcast QLinearAdd / QLinearMul
// (BERT's bias adds), DynamicQuantizeLinear's range. At 2 and 3 threads each gives the
// 1-thread session's output byte for byte, and the split ones wake the pool's worker: with
// spinning off a worker sleeps between loops and is woken only for a loop that was split, so its
// sleep count grows with the runs only when the kernel split (it did not before). Exactness
// against ONNX Runtime is tests/python/quantization/test_int8_threads_vs_ort.py.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "model_builder.h"
#include "onyx/session.h"
#include "platform/thread_pool.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

template <typename T>
Tensor Codes(DataType dt, const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<T> v(static_cast<size_t>(ShapeSize(shape)));
  for (auto& x : v) x = static_cast<T>(byte(rng));
  return Tensor::FromVector(dt, shape, v);
}

Tensor Floats(const Shape& shape, uint32_t seed, float amplitude) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, amplitude);
  std::vector<float> v(static_cast<size_t>(ShapeSize(shape)));
  for (auto& x : v) x = normal(rng);
  return Tensor::FromVector(DataType::kFloat, shape, v);
}

struct SplitRun {
  std::vector<std::vector<uint8_t>> outputs;  // every output's bytes
  uint64_t worker_wakes = 0;                  // worker sleeps during the timed runs
};

// Runs the model `runs` times (after one warm-up) at `threads` intra-op threads, spinning off;
// with wait_for_wake, waits up to 5 s for the worker to have woken.
SplitRun RunModel(const std::string& bytes, const NamedValues& feeds, int threads, bool wait_for_wake,
                  int runs = 20) {
  SessionOptions options;
  options.intra_op_num_threads = threads;
  options.config_entries["session.intra_op.allow_spinning"] = "0";
  Session s(bytes.data(), bytes.size(), options);
  s.Run(feeds);
  ThreadPool* pool = s.impl().thread_pool();
  const uint64_t before = pool != nullptr ? pool->stats().sleeps : 0;
  SplitRun r;
  for (int i = 0; i < runs; ++i) {
    const std::vector<Value> out = s.Run(feeds);
    if (i + 1 < runs) continue;
    for (const Value& v : out) {
      const Tensor& t = v.tensor();
      const auto* p = static_cast<const uint8_t*>(t.raw_data());
      r.outputs.emplace_back(p, p + t.byte_size());
    }
  }
  // A woken worker may get a processor only after the runs (a busy machine): wait for it.
  for (int waited = 0; pool != nullptr && wait_for_wake && waited < 5000; ++waited) {
    if (pool->stats().sleeps > before) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (pool != nullptr) r.worker_wakes = pool->stats().sleeps - before;
  return r;
}

// Same outputs at 1, 2 and 3 threads; with split_expected, the worker woke at 2 threads.
void ExpectSplitAndSame(const std::string& bytes, const NamedValues& feeds, bool split_expected) {
  const SplitRun one = RunModel(bytes, feeds, 1, false);
  ASSERT_FALSE(one.outputs.empty());
  for (int threads : {2, 3}) {
    const SplitRun many = RunModel(bytes, feeds, threads, split_expected && threads == 2);
    ASSERT_EQ(many.outputs.size(), one.outputs.size());
    for (size_t i = 0; i < one.outputs.size(); ++i)
      EXPECT_TRUE(many.outputs[i] == one.outputs[i]) << "output " << i << " differs at " << threads << " threads";
    if (split_expected && threads == 2) {
      EXPECT_GT(many.worker_wakes, 0u) << "the loop did not split";
    }
  }
}

std::string QGemmModel(int64_t k, int64_t n, bool a_signed, bool per_column) {
  test::ModelBuilder b;
  b.model().opset_imports["com.microsoft"] = 1;
  const DataType at = a_signed ? DataType::kInt8 : DataType::kUInt8;
  b.Input("a", at, {1, k});
  b.Initializer("a_scale", Tensor::Scalar<float>(DataType::kFloat, 0.02f));
  b.Initializer("a_zp", a_signed ? Tensor::Scalar<int8_t>(at, -3) : Tensor::Scalar<uint8_t>(at, 121));
  b.Initializer("b", Codes<int8_t>(DataType::kInt8, {n, k}, 7));
  std::vector<float> bs(static_cast<size_t>(per_column ? n : 1));
  std::vector<int8_t> bz(bs.size());
  for (size_t j = 0; j < bs.size(); ++j) bs[j] = 0.001f + 0.0001f * static_cast<float>(j % 7), bz[j] = 0;
  const Shape ps = per_column ? Shape{n} : Shape{};
  b.Initializer("b_scale", Tensor::FromVector(DataType::kFloat, ps, bs));
  b.Initializer("b_zp", Tensor::FromVector(DataType::kInt8, ps, bz));
  std::vector<int32_t> bias(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) bias[j] = static_cast<int32_t>((j * 37) % 2001) - 1000;
  b.Initializer("c", Tensor::FromVector(DataType::kInt32, {n}, bias));
  b.Initializer("y_scale", Tensor::Scalar<float>(DataType::kFloat, 0.05f));
  b.Initializer("y_zp", Tensor::Scalar<uint8_t>(DataType::kUInt8, 128));
  b.Node("QGemm", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "c", "y_scale", "y_zp"}, {"y"}, "com.microsoft")
      .attributes.push_back(test::IntAttr("transB", 1));
  b.Output("y", DataType::kUInt8, {1, n});
  return b.Bytes();
}

TEST(Int8ThreadSplit, QGemmOneRowClassifier) {
  // MobileNetV2's classifier (1280 -> 1000) and a width that leaves a partial panel.
  for (const auto& [k, n] : {std::pair<int64_t, int64_t>{1280, 1000}, {1283, 1009}})
    for (bool a_signed : {false, true})
      for (bool per_column : {false, true}) {
        SCOPED_TRACE(testing::Message() << k << "x" << n << " a_signed " << a_signed << " per_column " << per_column);
        const Tensor a = a_signed ? Codes<int8_t>(DataType::kInt8, {1, k}, 3) : Codes<uint8_t>(DataType::kUInt8, {1, k}, 3);
        ExpectSplitAndSame(QGemmModel(k, n, a_signed, per_column), {{"a", a}}, true);
      }
}

// QLinearAdd / QLinearMul of a [rows, cols] tensor with `b_shape` broadcast onto it (b first
// when b_first: A then stays put along the runs, ONNX Runtime's scalar-A order).
std::string BinaryModel(const std::string& op, const Shape& x_shape, const Shape& b_shape, bool b_first) {
  test::ModelBuilder b;
  b.model().opset_imports["com.microsoft"] = 1;
  b.Input("x", DataType::kUInt8, std::vector<int64_t>(x_shape.begin(), x_shape.end()));
  b.Input("w", DataType::kUInt8, std::vector<int64_t>(b_shape.begin(), b_shape.end()));
  b.Initializer("sx", Tensor::Scalar<float>(DataType::kFloat, 0.02f));
  b.Initializer("zx", Tensor::Scalar<uint8_t>(DataType::kUInt8, 121));
  b.Initializer("sw", Tensor::Scalar<float>(DataType::kFloat, 0.03f));
  b.Initializer("zw", Tensor::Scalar<uint8_t>(DataType::kUInt8, 133));
  b.Initializer("sy", Tensor::Scalar<float>(DataType::kFloat, op == "QLinearAdd" ? 0.05f : 0.3f));
  b.Initializer("zy", Tensor::Scalar<uint8_t>(DataType::kUInt8, 127));
  if (b_first) b.Node(op, {"w", "sw", "zw", "x", "sx", "zx", "sy", "zy"}, {"y"}, "com.microsoft");
  else b.Node(op, {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy"}, {"y"}, "com.microsoft");
  b.Output("y", DataType::kUInt8, std::vector<int64_t>(x_shape.begin(), x_shape.end()));
  return b.Bytes();
}

TEST(Int8ThreadSplit, BroadcastQLinearAddAndMul) {
  // BERT's bias add ([1, 128, 768] + [768]), a per-row operand on either side, and a long run
  // cut into pieces (32,769 = 2 x 16,384 + 1: a one-element last piece of a run whose A stays put).
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1, 128, 768}, {768}}, {{128, 768}, {128, 1}}, {{4, 32769}, {4, 1}}};
  for (const std::string op : {"QLinearAdd", "QLinearMul"})
    for (const auto& [xs, ws] : cases)
      for (bool b_first : {false, true}) {
        SCOPED_TRACE(testing::Message() << op << " " << ShapeToString(xs) << " " << ShapeToString(ws) << " b_first "
                                        << b_first);
        const NamedValues feeds = {{"x", Codes<uint8_t>(DataType::kUInt8, xs, 1)},
                                   {"w", Codes<uint8_t>(DataType::kUInt8, ws, 2)}};
        ExpectSplitAndSame(BinaryModel(op, xs, ws, b_first), feeds, true);
      }
}

TEST(Int8ThreadSplit, DynamicQuantizeLinearRange) {
  // BERT-base's FFN input (128 x 3072): 24 chunks of the range on the threads. The scale, zero
  // point and codes must not depend on the split; the largest magnitude sits in the last chunk.
  test::ModelBuilder b(13);
  b.Input("x", DataType::kFloat, {128, 3072});
  b.Node("DynamicQuantizeLinear", {"x"}, {"y", "y_scale", "y_zp"});
  b.Output("y", DataType::kUInt8, {128, 3072});
  b.Output("y_scale", DataType::kFloat, {});
  b.Output("y_zp", DataType::kUInt8, {});
  Tensor x = Floats({128, 3072}, 4, 1.5f);
  x.data<float>()[x.size() - 5] = -9.25f;
  ExpectSplitAndSame(b.Bytes(), {{"x", x}}, false);
}

}  // namespace
}  // namespace onyx
