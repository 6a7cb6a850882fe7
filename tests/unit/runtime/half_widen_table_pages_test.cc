// Where HalfBodyToFloat puts the float copy of a float16 embedding table: on small pages when
// Gather reads rows of it and a MatMul reads it only to pack it (directly, or transposed as a tied
// LM head), since neither streams the copy at Run time; on the default pages when another op
// reads it whole.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "optimizer/pass_test_util.h"
#include "runtime/page_flags.h"

namespace onyx {
namespace {

#if defined(__linux__)
constexpr int64_t kRows = 2048, kCols = 512;  // 4 MB widened: a mapping of its own on small pages

// ids -> Gather(table) -> emb (float16 body, Cast at the ends); `extra` adds the table's other reader.
std::string TableModel(const std::string& extra) {
  Tensor table(DataType::kFloat16, {kRows, kCols});
  std::memset(table.raw_data(), 0, table.byte_size());
  test::ModelBuilder b;
  b.Input("ids", DataType::kInt64, {4}).Input("x", DataType::kFloat, {4, kCols});
  b.Initializer("table", table);
  b.Node("Gather", {"table", "ids"}, {"eh"});
  b.Node("Cast", {"eh"}, {"emb"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  b.Output("emb", DataType::kFloat, {4, kCols});
  b.Node("Cast", {"x"}, {"xh"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat16)));
  if (extra == "tied head") {  // logits = x . table^T
    b.Node("Transpose", {"table"}, {"tt"}).attributes.push_back(test::IntsAttr("perm", {1, 0}));
    b.Node("MatMul", {"xh", "tt"}, {"lh"});
  } else {  // an op reading the whole table at every Run
    b.Node("Relu", {"table"}, {"lh"});
  }
  b.Node("Cast", {"lh"}, {"out"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  b.Output("out", DataType::kFloat, {extra == "tied head" ? 4 : kRows, extra == "tied head" ? kRows : kCols});
  return b.Bytes();
}

std::string WidenedTableFlags(const std::string& bytes, std::shared_ptr<ir::Model>* keep) {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.level = OptLevel::kBasic;
  options.only_passes = {"HalfBodyToFloat"};
  OptimizeModel(*model, options);
  *keep = model;
  const Tensor* wide = model->graph->FindInitializer("table_float");
  if (wide == nullptr || wide->dtype() != DataType::kFloat) return "not widened";
  return test::VmFlagsOf(wide->raw_data());
}

TEST(HalfWidenTablePages, AGatheredTableWithATiedHeadGoesOnSmallPages) {
  std::shared_ptr<ir::Model> keep;
  const std::string flags = WidenedTableFlags(TableModel("tied head"), &keep);
  ASSERT_NE(flags, "not widened");
  EXPECT_NE(flags.find(" nh"), std::string::npos) << flags;  // MADV_NOHUGEPAGE
}

TEST(HalfWidenTablePages, ATableReadWholeStaysOnTheDefaultPages) {
  std::shared_ptr<ir::Model> keep;
  const std::string flags = WidenedTableFlags(TableModel("relu"), &keep);
  ASSERT_NE(flags, "not widened");
  EXPECT_EQ(flags.find(" nh"), std::string::npos) << flags;
}
#endif

}  // namespace
}  // namespace onyx
