#include "ops/broadcast.h"

#include <gtest/gtest.h>

#include "onyx/error.h"

namespace onyx {
namespace {

TEST(Broadcast, Shapes) {
  EXPECT_EQ(BroadcastShapes({{2, 3, 4}, {4}}), (Shape{2, 3, 4}));
  EXPECT_EQ(BroadcastShapes({{2, 1, 4}, {3, 1}}), (Shape{2, 3, 4}));
  EXPECT_EQ(BroadcastShapes({{}, {5}}), (Shape{5}));
  EXPECT_EQ(BroadcastShapes({{0, 1}, {1, 3}}), (Shape{0, 3}));
  EXPECT_THROW(BroadcastShapes({{2, 3}, {4}}), Error);
}

// Every output element must see the input elements numpy would give it.
TEST(Broadcast, RunsVisitEveryElementWithNumpyOffsets) {
  const Shape a{2, 1, 4}, b{3, 1}, out = BroadcastShapes({a, b});
  std::vector<int> seen(ShapeSize(out), 0);
  ForEachBroadcastRun(out, {a, b}, [&](const BroadcastRun& run) {
    for (int64_t i = 0; i < run.count; ++i) {
      const int64_t o = run.out + i;
      const int64_t i0 = o / 12, i1 = (o / 4) % 3, i2 = o % 4;
      EXPECT_EQ(run.in[0] + i * run.step[0], i0 * 4 + i2);
      EXPECT_EQ(run.in[1] + i * run.step[1], i1);
      ++seen[o];
    }
  });
  for (int s : seen) EXPECT_EQ(s, 1);
}

TEST(Broadcast, NormalizeAxis) {
  EXPECT_EQ(NormalizeAxis(-1, 3), 2);
  EXPECT_EQ(NormalizeAxis(0, 3), 0);
  EXPECT_THROW(NormalizeAxis(3, 3), Error);
}

}  // namespace
}  // namespace onyx
