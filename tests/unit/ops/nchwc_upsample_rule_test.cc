// Shape rule of com.onyx NchwcUpsample: H and W times the whole scales, a scale of 1 keeping the
// dim (symbol included), an unknown dim staying unknown; checked against sizes worked out by hand.
#include <gtest/gtest.h>

#include "infer_test_util.h"
#include "model_builder.h"

namespace onyx {
namespace {

using test::Infer;
using test::IntAttr;
using test::TypeOf;

TEST(NchwcShapeRules, Upsample) {
  test::ModelBuilder b;
  b.model().opset_imports["com.onyx"] = 1;
  b.Input("x", DataType::kFloat, {2, 3, 11, 12, 8}).Input("y", DataType::kFloat, {-1, 3, -1, 5, 16});
  for (const char* out : {"up", "tall", "sym"}) b.Output(out, DataType::kFloat, {-1, -1, -1, -1, -1});
  b.Node("NchwcUpsample", {"x"}, {"up"}, "com.onyx").attributes = {IntAttr("scale_h", 2), IntAttr("scale_w", 3)};
  b.Node("NchwcUpsample", {"x"}, {"tall"}, "com.onyx").attributes = {IntAttr("scale_h", 4), IntAttr("scale_w", 1)};
  b.Node("NchwcUpsample", {"y"}, {"sym"}, "com.onyx").attributes = {IntAttr("scale_h", 2), IntAttr("scale_w", 2)};
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "up"), "tensor(float)[2,3,22,36,8]");
  EXPECT_EQ(TypeOf(types, "tall"), "tensor(float)[2,3,44,12,8]");
  EXPECT_EQ(TypeOf(types, "sym"), "tensor(float)[d0,3,?,10,16]");
}

}  // namespace
}  // namespace onyx
