// Error messages are valid UTF-8 on one line whatever bytes a model's names hold (the loader
// quotes them): invalid sequences and control characters appear as \xNN.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "onnx/model_loader.h"

namespace onyx {
namespace {

std::string Message(const std::string& text) { return Error(ErrorCode::kFail, text).what(); }

TEST(ErrorEscape, KeepsValidUtf8AndEscapesEverythingElse) {
  EXPECT_EQ(Message("plain 'name' (Conv, opset 11)"), "plain 'name' (Conv, opset 11)");
  EXPECT_EQ(Message("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(Message("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(Message("line\nbreak\t\x1b[31m"), "line\\x0abreak\\x09\\x1b[31m");
  EXPECT_EQ(Message(std::string("nul\0byte", 8)), "nul\\x00byte");
  EXPECT_EQ(Message("\xc0\xaf"), "\\xc0\\xaf");             // overlong '/'
  EXPECT_EQ(Message("\xed\xa0\x80"), "\\xed\\xa0\\x80");    // a UTF-16 surrogate
  EXPECT_EQ(Message("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(Message("cut \xe2\x82"), "cut \\xe2\\x82");     // truncated sequence
  EXPECT_EQ(Message("\x7f"), "\\x7f");
  // Escaping an escaped message changes nothing (errors are re-wrapped with context).
  EXPECT_EQ(Message(Message("x\xff\n")), Message("x\xff\n"));
}

TEST(ErrorEscape, LoaderErrorsQuoteInvalidNamesEscaped) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  b.Node("Relu", {std::string("bad\xff\xfe\n\0name", 11)}, {"y"});
  const std::string bytes = b.Bytes();
  try {
    LoadModelFromBytes(bytes.data(), bytes.size());
    ADD_FAILURE() << "a dangling input loaded";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'bad\\xff\\xfe\\x0a\\x00name'"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace onyx
