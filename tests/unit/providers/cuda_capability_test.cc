// The CUDA provider's capability without a GPU: a placement-only CUDA provider claims nodes as it
// would with a device, and gives its reason for each one it declines (no CUDA kernel, a dtype its
// kernel lacks, an attribute it does not handle, a node computing shapes). A session asking for
// CUDA on a machine without a device fails naming cudaGetDeviceCount's result. In a build
// without CUDA, the provider is absent and asking for it is an error saying so.
#include <gtest/gtest.h>

#include <map>

#include "model_builder.h"
#include "onnx/model_loader.h"
#include "onyx/session.h"
#include "providers/provider.h"

namespace onyx {
namespace {

bool BuiltWithCuda() {
  for (const auto& p : AvailableProviders())
    if (p == "CUDAExecutionProvider") return true;
  return false;
}

std::string Model() {
  test::ModelBuilder b(18);
  b.Input("x", DataType::kFloat, {2, 3}).Input("d", DataType::kDouble, {2, 3}).Input("i", DataType::kInt32, {2, 3});
  b.Output("y", DataType::kFloat, {3, 2}).Output("e", DataType::kDouble, {2, 3}).Output("n", DataType::kInt32, {2, 3});
  b.Output("s", DataType::kInt32, {2}).Output("m", DataType::kFloat, {2, 1}).Output("c", DataType::kInt8, {2, 3});
  b.Initializer("scale", test::FloatTensor({3}, 1.0f, 0.5f));
  b.Node("Add", {"x", "x"}, {"a"}).name = "add_float";
  b.Node("Add", {"d", "d"}, {"e"}).name = "add_double";
  b.Node("Neg", {"i"}, {"n"}).name = "neg_int";
  b.Node("Shape", {"x"}, {"shape"}).name = "shape_of_x";
  b.Node("Cast", {"shape"}, {"s"}).name = "cast_shape";
  b.Node("Cast", {"x"}, {"c"}).name = "cast_to_int8";
  b.Node("Cast", {"x"}, {"xi"}).name = "cast_to_int32";
  b.Node("Reshape", {"a", "shape2"}, {"y"}).name = "reshape";
  b.Initializer("shape2", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {3, 2}));
  auto& ln = b.Node("LayerNormalization", {"x", "scale"}, {"ln", "m"});
  ln.name = "layer_norm_with_mean";
  b.model().graph->nodes[4]->attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kInt32)));
  b.model().graph->nodes[5]->attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kInt8)));
  b.model().graph->nodes[6]->attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kInt32)));
  return b.Bytes();
}

TEST(CudaCapability, ClaimsWithoutADeviceAndSaysWhyNot) {
  if (!BuiltWithCuda()) {
    EXPECT_EQ(FindProviderFactory("CUDA"), nullptr);
    EXPECT_THROW(ProviderUnavailableReason("CUDA"), Error);
    return;
  }
  const std::string bytes = Model();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  auto cuda = FindProviderFactory("CUDA")->make({}, /*placement_only=*/true);
  EXPECT_EQ(cuda->name(), "CUDA");
  EXPECT_EQ(cuda->device().type, DeviceType::kCuda);
  const auto claims = cuda->GetCapability(*model->graph);
  std::map<std::string, NodeClaim> by_name;
  for (size_t i = 0; i < claims.size(); ++i) by_name[model->graph->nodes[i]->name] = claims[i];
  EXPECT_TRUE(by_name["add_float"].claimed);
  EXPECT_TRUE(by_name["cast_to_int32"].claimed);
  EXPECT_TRUE(by_name["reshape"].claimed);
  EXPECT_FALSE(by_name["add_double"].claimed);
  EXPECT_EQ(by_name["add_double"].reason,
            "unsupported dtype double (input 'd'): CUDA's Add kernel supports float, float16, bfloat16");
  EXPECT_EQ(by_name["neg_int"].reason, "no CUDA kernel for op Neg");
  EXPECT_EQ(by_name["shape_of_x"].reason, "no CUDA kernel for op Shape");
  EXPECT_NE(by_name["cast_shape"].reason.find("it computes a shape"), std::string::npos) << by_name["cast_shape"].reason;
  EXPECT_NE(by_name["cast_to_int8"].reason.find("unsupported dtype int8 (attribute to)"), std::string::npos)
      << by_name["cast_to_int8"].reason;
  EXPECT_NE(by_name["layer_norm_with_mean"].reason.find("computes Y only"), std::string::npos)
      << by_name["layer_norm_with_mean"].reason;
  EXPECT_TRUE(cuda->InputOnCpu(*model->graph->nodes[7], 1));   // Reshape's shape
  EXPECT_FALSE(cuda->InputOnCpu(*model->graph->nodes[7], 0));
}

TEST(CudaCapability, ASessionWithoutADeviceNamesCudaGetDeviceCount) {
  if (!BuiltWithCuda()) {
    SessionOptions o;
    o.execution_providers = {"CUDA", "CPU"};
    const std::string bytes = Model();
    EXPECT_THROW(Session(bytes.data(), bytes.size(), o), Error);
    return;
  }
  const std::string why = ProviderUnavailableReason("CUDAExecutionProvider");
  if (why.empty()) return;  // a GPU machine: tests/gpu checks the provider there
  EXPECT_NE(why.find("cudaGetDeviceCount"), std::string::npos) << why;
  SessionOptions o;
  o.execution_providers = {"CUDAExecutionProvider", "CPUExecutionProvider"};
  const std::string bytes = Model();
  try {
    Session s(bytes.data(), bytes.size(), o);
    ADD_FAILURE() << "a CUDA session without a device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no usable CUDA device: cudaGetDeviceCount"), std::string::npos) << e.what();
  }
  // Options are checked before the device is looked for.
  o.provider_options["CUDA"] = {{"gpu_mem_limit", "-5"}};
  try {
    Session s(bytes.data(), bytes.size(), o);
    ADD_FAILURE() << "accepted a bad option";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("gpu_mem_limit='-5'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onyx
