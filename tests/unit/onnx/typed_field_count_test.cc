// A TensorProto whose dims ask for more values than its typed fields hold is refused before the
// tensor is allocated (found by the TensorProto fuzz harness: 38 bytes made the reader allocate
// 2.8 GB before noticing that a float tensor of 699 million elements had five values).
#include <gtest/gtest.h>

#include <string>

#include "onnx/proto_decode.h"
#include "onnx/wire_writer.h"
#include "onyx/error.h"
#include "scratch_file.h"

namespace onyx {
namespace {

// The tensor read back from a scratch file holding it (removed afterwards).
Value ReadTensorFile(const std::string& name, const proto::WireWriter& tensor) {
  const ScratchFile file("typed_field_count_" + name + ".pb", tensor.data());
  return proto::ReadValueFile(file.path(), nullptr);
}

proto::WireWriter FloatTensor(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  proto::WireWriter t;
  t.PackedInt64(1, dims);
  t.Int64(2, static_cast<int64_t>(DataType::kFloat));
  t.PackedFloat(4, values);
  return t;
}

TEST(TypedFieldCount, TooFewValuesIsAModelErrorBeforeAllocating) {
  // 2^45 floats need 2^47 bytes: allocating first used to fail with an out-of-memory error (or,
  // under the limit, allocate gigabytes) instead of naming the missing values.
  try {
    ReadTensorFile("huge", FloatTensor({int64_t{1} << 45}, {1.0f, 2.0f}));
    FAIL() << "read a tensor with 2 of 2^45 values";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidModel) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs 35184372088832 values but has 2"), std::string::npos) << e.what();
  }
}

TEST(TypedFieldCount, ComplexAndPackedCounts) {
  proto::WireWriter complex;
  complex.PackedInt64(1, {int64_t{1} << 62});
  complex.Int64(2, static_cast<int64_t>(DataType::kComplex64));
  complex.PackedFloat(4, {1.0f, 2.0f});
  EXPECT_THROW(ReadTensorFile("complex", complex), Error);
  // The values a shape needs read as before.
  const Value v = ReadTensorFile("fits", FloatTensor({2}, {1.0f, 2.0f}));
  ASSERT_TRUE(v.is_tensor());
  EXPECT_EQ(v.tensor().data<float>()[1], 2.0f);
}

}  // namespace
}  // namespace onyx
