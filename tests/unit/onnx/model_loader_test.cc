#include "onnx/model_loader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "model_builder.h"
#include "onnx/wire_writer.h"
#include "onyx/session.h"

namespace onyx {
namespace {

namespace fs = std::filesystem;

std::string AddModelBytes() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {2, 3});
  b.Initializer("w", test::FloatTensor({2, 3}));
  b.Node("Add", {"x", "w"}, {"y"});
  return b.Bytes();
}

std::string LoadError(const std::string& bytes, ErrorCode want = ErrorCode::kInvalidModel) {
  try {
    LoadModelFromBytes(bytes.data(), bytes.size());
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), want);
    return e.what();
  }
  return "";
}

fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("onyx_unit_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(ModelLoader, RoundTripsThroughTheWriter) {
  const std::string bytes = AddModelBytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  ASSERT_EQ(model->graph->nodes.size(), 1u);
  EXPECT_EQ(model->graph->nodes[0]->op_type, "Add");
  EXPECT_EQ(model->graph->nodes[0]->opset, 17);
  const Tensor* w = model->graph->FindInitializer("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape(), (Shape{2, 3}));
  EXPECT_EQ(w->data<float>()[5], 5.0f);
}

TEST(ModelLoader, EveryTruncationFailsCleanly) {
  const std::string bytes = AddModelBytes();
  for (size_t len = 0; len < bytes.size(); ++len) {
    // Any prefix either loads (a valid shorter message) or throws a protobuf or model error;
    // never crashes.
    try {
      LoadModelFromBytes(bytes.data(), len);
    } catch (const Error& e) {
      EXPECT_TRUE(e.code() == ErrorCode::kInvalidProtobuf || e.code() == ErrorCode::kInvalidModel) << len;
    }
  }
  EXPECT_NE(LoadError(bytes.substr(0, bytes.size() / 2), ErrorCode::kInvalidProtobuf).find("<model bytes>"),
            std::string::npos);
}

TEST(ModelLoader, RandomBytesFailCleanly) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes(1 + rng() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    try {
      LoadModelFromBytes(bytes.data(), bytes.size());
    } catch (const Error& e) {
      EXPECT_TRUE(e.code() == ErrorCode::kInvalidProtobuf || e.code() == ErrorCode::kInvalidModel);
    }
  }
}

// ONNX Runtime's codes: INVALID_PROTOBUF for bytes that do not parse, NO_SUCHFILE for a missing
// file; a parsed message without a graph stays a model error.
TEST(ModelLoader, BytesThatAreNotProtobufAreInvalidProtobuf) {
  const std::string error = LoadError("\xff\xfe garbage bytes here", ErrorCode::kInvalidProtobuf);
  EXPECT_NE(error.find("<model bytes>"), std::string::npos) << error;
  proto::WireWriter no_graph;
  no_graph.Int64(1, 8);
  EXPECT_NE(LoadError(no_graph.data()).find("no graph"), std::string::npos);
}

TEST(ModelLoader, MissingFileIsNoSuchFile) {
  const std::string path = (fs::temp_directory_path() / "onyx_no_such_model.onnx").string();
  try {
    LoadModelFromFile(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNoSuchFile);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(Session session(path), Error);
}

TEST(ModelLoader, MissingExternalDataIsNoSuchFileNamingTheTensor) {
  const fs::path dir = TempDir("missing_external");
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {4}).Output("y", DataType::kFloat, {4});
  b.Initializer("w", test::FloatTensor({4}, 1.0f));
  b.Node("Add", {"x", "w"}, {"y"});
  SaveOptions options;
  options.external_threshold_bytes = 0;
  const std::string path = (dir / "model.onnx").string();
  SaveModel(b.model(), path, options);
  fs::remove(dir / "model.onnx.data");
  try {
    LoadModelFromFile(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kNoSuchFile);
    EXPECT_NE(what.find("model.onnx.data' does not exist"), std::string::npos) << what;
    EXPECT_NE(what.find("tensor 'w'"), std::string::npos) << what;
    EXPECT_NE(what.find(path + ":"), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

TEST(ModelLoader, RejectsUnsupportedIrVersion) {
  test::ModelBuilder b(17, 99);
  b.Input("x", DataType::kFloat, {1}).Output("x", DataType::kFloat, {1});
  EXPECT_NE(LoadError(b.Bytes()).find("IR version 99"), std::string::npos);
}

TEST(ModelLoader, SortsNodesTopologically) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  b.Node("Add", {"y", "y"}, {"z"});  // listed before its producer
  b.Node("Add", {"x", "x"}, {"y"});
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  EXPECT_EQ(model->graph->nodes[0]->outputs[0], "y");
  Session session(bytes.data(), bytes.size());
  auto out = session.Run({{"x", Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2})}});
  EXPECT_EQ(out[0].tensor().data<float>()[1], 8.0f);
}

TEST(ModelLoader, ReportsCycles) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  b.Node("Add", {"x", "z"}, {"y"});
  b.Node("Add", {"y", "x"}, {"z"});
  EXPECT_NE(LoadError(b.Bytes()).find("cycle"), std::string::npos);
}

TEST(ModelLoader, ReportsUndefinedInputs) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  b.Node("Add", {"x", "nowhere"}, {"y"});
  const std::string error = LoadError(b.Bytes());
  EXPECT_NE(error.find("'nowhere'"), std::string::npos) << error;
  EXPECT_NE(error.find("Add"), std::string::npos) << error;
}

TEST(ModelLoader, UnknownOpNamesTheNode) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  b.Node("NoSuchOp", {"x"}, {"y"}).name = "mystery";
  const std::string bytes = b.Bytes();
  try {
    Session session(bytes.data(), bytes.size());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kNotImplemented);
    EXPECT_NE(what.find("'mystery'"), std::string::npos) << what;
    EXPECT_NE(what.find("NoSuchOp"), std::string::npos) << what;
    EXPECT_NE(what.find("opset 17"), std::string::npos) << what;
  }
}

TEST(ModelLoader, HugeDimsInAnInitializerFailCleanly) {
  // dims [2^40, 2^40] with 4 bytes of data.
  proto::WireWriter tensor;
  tensor.PackedInt64(1, {int64_t{1} << 40, int64_t{1} << 40});
  tensor.Varint(2, 1);
  tensor.Bytes(8, "w");
  tensor.Bytes(9, std::string(4, '\0'));
  proto::WireWriter graph;
  graph.Message(5, tensor);
  proto::WireWriter model;
  model.Int64(1, 8);
  model.Message(7, graph);
  const std::string error = LoadError(model.data());
  EXPECT_NE(error.find("tensor 'w'"), std::string::npos) << error;
}

TEST(ModelLoader, ExternalDataIsMappedAndChecked) {
  const fs::path dir = TempDir("external");
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {4, 4}).Output("y", DataType::kFloat, {4, 4});
  b.Initializer("w", test::FloatTensor({4, 4}, 1.0f));
  b.Node("Add", {"x", "w"}, {"y"});
  SaveOptions options;
  options.external_threshold_bytes = 0;
  const std::string path = (dir / "model.onnx").string();
  SaveModel(b.model(), path, options);
  ASSERT_TRUE(fs::exists(dir / "model.onnx.data"));
  auto model = LoadModelFromFile(path);
  const Tensor* w = model->graph->FindInitializer("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->data<float>()[15], 16.0f);

  // A location outside the model's folder is refused.
  for (const char* bad : {"../escape.data", "/etc/passwd"}) {
    test::ModelBuilder e;
    e.Input("x", DataType::kFloat, {1}).Output("x", DataType::kFloat, {1});
    proto::WireWriter tensor, entry_loc, graph, model_w, entry_len;
    tensor.PackedInt64(1, {1});
    tensor.Varint(2, 1);
    tensor.Bytes(8, "w");
    entry_loc.Bytes(1, "location");
    entry_loc.Bytes(2, bad);
    tensor.Message(13, entry_loc);
    tensor.Varint(14, 1);
    graph.Message(5, tensor);
    model_w.Int64(1, 8);
    model_w.Message(7, graph);
    const fs::path bad_path = dir / "bad.onnx";
    std::ofstream(bad_path, std::ios::binary) << model_w.data();
    try {
      LoadModelFromFile(bad_path.string());
      FAIL() << "expected an error for " << bad;
    } catch (const Error& err) {
      const std::string what = err.what();
      EXPECT_EQ(err.code(), ErrorCode::kInvalidModel);
      EXPECT_NE(what.find(bad), std::string::npos) << what;
      EXPECT_NE(what.find("bad.onnx"), std::string::npos) << what;
    }
  }
  fs::remove_all(dir);
}

TEST(ModelLoader, InitializersThatAreInputsAreOverridableDefaults) {
  test::ModelBuilder b(9, 3);
  b.Input("x", DataType::kFloat, {2}).Input("bias", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  b.Initializer("bias", Tensor::FromVector<float>(DataType::kFloat, {2}, {10, 20}));
  b.Node("Add", {"x", "bias"}, {"y"});
  const std::string bytes = b.Bytes();
  Session session(bytes.data(), bytes.size());
  ASSERT_EQ(session.inputs().size(), 1u);
  ASSERT_EQ(session.overridable_initializers().size(), 1u);
  auto x = Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2});
  EXPECT_EQ(session.Run({{"x", x}})[0].tensor().data<float>()[1], 22.0f);
  auto bias = Tensor::FromVector<float>(DataType::kFloat, {2}, {100, 200});
  EXPECT_EQ(session.Run({{"x", x}, {"bias", bias}})[0].tensor().data<float>()[1], 202.0f);
}

// A model-local function Double(x) = Add(x, x) called twice, with an attribute reference.
TEST(ModelLoader, InlinesModelLocalFunctions) {
  proto::WireWriter fn;
  fn.Bytes(1, "Double");
  fn.Bytes(4, "a");
  fn.Bytes(5, "b");
  {
    proto::WireWriter node;
    node.Bytes(1, "a");
    node.Bytes(1, "a");
    node.Bytes(2, "b");
    node.Bytes(4, "Add");
    fn.Message(7, node);
  }
  {
    proto::WireWriter opset;
    opset.Bytes(1, "");
    opset.Int64(2, 17);
    fn.Message(9, opset);
  }
  fn.Bytes(10, "custom");
  test::ModelBuilder b;
  b.model().opset_imports["custom"] = 1;
  b.Input("x", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  b.Node("Double", {"x"}, {"y"}, "custom");
  b.Node("Double", {"y"}, {"z"}, "custom");
  std::string bytes = b.Bytes();
  proto::WireWriter extra;
  extra.Message(25, fn);
  bytes += extra.data();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  ASSERT_EQ(model->graph->nodes.size(), 2u);
  EXPECT_EQ(model->graph->nodes[0]->op_type, "Add");
  Session session(bytes.data(), bytes.size());
  auto out = session.Run({{"x", Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 3})}});
  EXPECT_EQ(out[0].tensor().data<float>()[1], 12.0f);
}

TEST(ModelLoader, SparseInitializersBecomeDense) {
  proto::WireWriter values, indices, sparse, graph, model_w;
  values.PackedInt64(1, {2});
  values.Varint(2, 1);
  values.Bytes(8, "s");
  std::string raw(8, '\0');
  const float v[2] = {5.0f, 7.0f};
  std::memcpy(raw.data(), v, 8);
  values.Bytes(9, raw);
  indices.PackedInt64(1, {2});
  indices.Varint(2, 7);
  indices.PackedInt64(7, {1, 3});
  sparse.Message(1, values);
  sparse.Message(2, indices);
  sparse.PackedInt64(3, {4});
  graph.Message(15, sparse);
  model_w.Int64(1, 8);
  model_w.Message(7, graph);
  auto model = LoadModelFromBytes(model_w.data().data(), model_w.size());
  const Tensor* s = model->graph->FindInitializer("s");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->data<float>()[0], 0.0f);
  EXPECT_EQ(s->data<float>()[1], 5.0f);
  EXPECT_EQ(s->data<float>()[3], 7.0f);
}

}  // namespace
}  // namespace onyx
