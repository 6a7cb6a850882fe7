// The loader's structural checks (opsets, node arity, declared sizes) and the limits' config
// entries: each malformed model is a one-line kInvalidModel error naming what is wrong.
#include "onnx/model_validation.h"

#include <gtest/gtest.h>

#include "model_builder.h"
#include "onnx/model_loader.h"
#include "onyx/session.h"

namespace onyx {
namespace {

std::string LoadError(const test::ModelBuilder& b, const LoadLimits& limits = {}) {
  const std::string bytes = b.Bytes();
  try {
    LoadModelFromBytes(bytes.data(), bytes.size(), limits);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel) << e.what();
    return e.what();
  }
  return "";
}

test::ModelBuilder ReluModel(int64_t opset, std::vector<int64_t> dims = {2, 3}) {
  test::ModelBuilder b(opset);
  b.Input("x", DataType::kFloat, dims).Output("y", DataType::kFloat, dims);
  b.Node("Relu", {"x"}, {"y"});
  return b;
}

TEST(ModelValidation, OpsetsOutOfRangeAreNamed) {
  EXPECT_EQ(LoadError(ReluModel(NewestKnownOpset(""))), "");
  EXPECT_NE(LoadError(ReluModel(NewestKnownOpset("") + 1)).find("opset 29 of domain 'ai.onnx' is newer than the newest Onyx knows (28)"),
            std::string::npos);
  EXPECT_NE(LoadError(ReluModel(0)).find("opset import of domain 'ai.onnx' has version 0"), std::string::npos);
  EXPECT_NE(LoadError(ReluModel(int64_t{1} << 40)).find("has version 1099511627776"), std::string::npos);
  test::ModelBuilder ml = ReluModel(17);
  ml.model().opset_imports["ai.onnx.ml"] = 6;
  EXPECT_NE(LoadError(ml).find("domain 'ai.onnx.ml' is newer"), std::string::npos);
  test::ModelBuilder custom = ReluModel(17);
  custom.model().opset_imports["com.example"] = 1000;  // other domains have no upper bound
  EXPECT_EQ(LoadError(custom), "");
}

TEST(ModelValidation, NodeArityFollowsTheSchemaOfTheImportedVersion) {
  test::ModelBuilder no_input(17);
  no_input.Input("x", DataType::kFloat, {2}).Output("s", DataType::kInt64, {1});
  no_input.Node("Shape", {}, {"s"});
  EXPECT_NE(LoadError(no_input).find("node 'Shape_0' (Shape, opset 17) has 0 inputs; Shape-15 takes 1"),
            std::string::npos);

  test::ModelBuilder extra(17);
  extra.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  extra.Node("Add", {"x", "x", "x"}, {"y"});
  EXPECT_NE(LoadError(extra).find("has 3 inputs; Add-14 takes 2"), std::string::npos);

  test::ModelBuilder outputs(17);
  outputs.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  outputs.Node("Relu", {"x"}, {"y", "z"});
  EXPECT_NE(LoadError(outputs).find("has 2 outputs; Relu-14 gives 1"), std::string::npos);

  // Clip took only attributes before opset 11 and up to 3 inputs after.
  for (int64_t opset : {6, 11}) {
    test::ModelBuilder clip(opset);
    clip.Input("x", DataType::kFloat, {2}).Input("lo", DataType::kFloat, {}).Output("y", DataType::kFloat, {2});
    clip.Node("Clip", {"x", "lo"}, {"y"});
    EXPECT_EQ(LoadError(clip).empty(), opset == 11) << opset;
  }

  test::ModelBuilder variadic(17);
  variadic.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {10});
  auto& concat = variadic.Node("Concat", {"x", "x", "x", "x", "x"}, {"y"});
  concat.attributes.push_back(test::IntAttr("axis", 0));
  EXPECT_EQ(LoadError(variadic), "");
}

TEST(ModelValidation, DeclaredSizesBeyondTheLimitsAreErrors) {
  EXPECT_NE(LoadError(ReluModel(17, {1, int64_t{1} << 40})).find("input 'x' has dimension 1099511627776, more than the limit"),
            std::string::npos);
  // 2^20 x 2^20 dims are each fine, their product is not.
  EXPECT_NE(LoadError(ReluModel(17, {int64_t{1} << 20, int64_t{1} << 20})).find("elements"), std::string::npos);
  LoadLimits small;
  small.max_elements = 100;
  EXPECT_EQ(LoadError(ReluModel(17, {10, 10}), small), "");
  EXPECT_NE(LoadError(ReluModel(17, {10, 11}), small).find("more than 100 elements (session config onyx.loader.max_elements)"),
            std::string::npos);
  LoadLimits rank;
  rank.max_rank = 3;
  EXPECT_NE(LoadError(ReluModel(17, {1, 1, 1, 1}), rank).find("has rank 4"), std::string::npos);
  LoadLimits dim;
  dim.max_dim = 7;
  EXPECT_NE(LoadError(ReluModel(17, {8}), dim).find("has dimension 8"), std::string::npos);

  test::ModelBuilder init(17);
  init.Input("x", DataType::kFloat, {-1, -1}).Output("y", DataType::kFloat, {-1, -1});
  init.Initializer("w", test::FloatTensor({2, 3}));
  init.Node("Add", {"x", "w"}, {"y"});
  LoadLimits five;
  five.max_elements = 5;
  EXPECT_NE(LoadError(init, five).find("initializer 'w' has 6 elements, more than the limit of 5"), std::string::npos);
}

TEST(ModelValidation, LimitsComeFromSessionConfigEntries) {
  std::map<std::string, std::string> entries = {{kConfigMaxElements, "5"}, {kConfigMaxDim, "64"}, {kConfigMaxRank, "4"}};
  LoadLimits limits = LoadLimitsFromConfig(entries);
  EXPECT_EQ(limits.max_elements, 5);
  EXPECT_EQ(limits.max_dim, 64);
  EXPECT_EQ(limits.max_rank, 4);
  for (const char* bad : {"", "abc", "0", "-3", "12x", "99999999999999999999999"}) {
    try {
      LoadLimitsFromConfig({{kConfigMaxDim, bad}});
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("onyx.loader.max_dim"), std::string::npos) << e.what();
    }
  }

  // A session honours the entry: the same [2,3] model loads by default and fails at 5 elements.
  const std::string bytes = ReluModel(17).Bytes();
  SessionOptions options;
  Session ok(bytes.data(), bytes.size(), options);
  options.config_entries[kConfigMaxElements] = "5";
  try {
    Session limited(bytes.data(), bytes.size(), options);
    ADD_FAILURE() << "the limit was ignored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 5 elements"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onyx
