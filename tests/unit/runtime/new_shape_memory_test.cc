// Runs at new input shapes, growing and shrinking: results stay right, and a Run at a shape
// slightly larger than any before takes its intermediates from the memory-pattern block (its
// headroom) instead of fresh memory from the system (docs/memory.md, "The first Run at a new
// shape").
#include <gtest/gtest.h>

#include <cmath>

#include "model_builder.h"
#include "onyx/session.h"
#include "runtime/session_impl.h"
#include "tensor/arena_allocator.h"

namespace onyx {
namespace {

constexpr int64_t kColumns = 512;

// x [rows, 512] -> a = Neg(x), b = Abs(x), c = Sub(b, a) = |x| + x, d = Mul(c, b), y = ReduceSum(d):
// three [rows, 512] intermediates alive at once, a scalar output.
std::string Model() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, kColumns}).Output("y", DataType::kFloat, {});
  b.Node("Neg", {"x"}, {"a"});
  b.Node("Abs", {"x"}, {"b"});
  b.Node("Sub", {"b", "a"}, {"c"});
  b.Node("Mul", {"c", "b"}, {"d"});
  b.Node("ReduceSum", {"d"}, {"y"}).attributes.push_back(test::IntAttr("keepdims", 0));
  return b.Bytes();
}

// The sum of 2 x^2 over the positive elements, in double.
double Reference(const Tensor& x) {
  double sum = 0;
  for (int64_t i = 0; i < x.size(); ++i) {
    const double v = x.data<float>()[i];
    if (v > 0) sum += 2 * v * v;
  }
  return sum;
}

class NewShapes : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = Model();
    SessionOptions options;
    options.graph_optimization_level = GraphOptimizationLevel::kDisabled;
    options.intra_op_num_threads = 1;
    session_ = std::make_unique<Session>(bytes_.data(), bytes_.size(), options);
  }
  // Runs at `rows` and checks y against the reference.
  void RunAt(int64_t rows) {
    const Tensor x = test::PatternTensor({rows, kColumns}, static_cast<uint32_t>(rows));
    const auto out = session_->Run({{"x", x}});
    const double want = Reference(x);
    EXPECT_NEAR(out[0].tensor().data<float>()[0], want, 1e-4 * want + 1e-3) << "rows " << rows;
  }
  ArenaAllocator::Stats Stats() const { return session_->impl().arena()->stats(); }

  std::string bytes_;
  std::unique_ptr<Session> session_;
};

TEST_F(NewShapes, ResultsStayRightAcrossGrowingAndShrinkingShapes) {
  for (int64_t rows : {128, 128, 136, 64, 8, 160, 1, 136, 256, 8, 256, 200, 2})
    RunAt(rows);
  // However many shapes came, one block is kept for each of a bounded number of them.
  EXPECT_LE(Stats().pattern_blocks, 16u);
}

TEST_F(NewShapes, ASlightlyLargerShapeFitsTheBlockItBorrows) {
  RunAt(128);
  RunAt(128);
  const ArenaAllocator::Stats warm = Stats();
  RunAt(136);  // 6% more than any Run before: inside the block's headroom
  EXPECT_EQ(Stats().backing_allocations, warm.backing_allocations);
  EXPECT_EQ(Stats().reserved, warm.reserved);
  RunAt(96);  // and smaller shapes fit too
  EXPECT_EQ(Stats().backing_allocations, warm.backing_allocations);
}

TEST_F(NewShapes, AMuchLargerShapeGrowsTheBlockOnce) {
  RunAt(128);
  RunAt(256);  // outgrows the block: the block is grown (or replaced) to fit it, with headroom
  const ArenaAllocator::Stats grown = Stats();
  EXPECT_EQ(grown.pattern_blocks, 1u);
  RunAt(256);
  RunAt(264);
  RunAt(128);
  EXPECT_EQ(Stats().backing_allocations, grown.backing_allocations);
}

}  // namespace
}  // namespace onyx
