// StorageBytes on element counts whose byte size overflows int64 (found by the .npy fuzz harness:
// a string tensor of 2^59 elements sized as 2^64 bytes wrapped to 0, and the tensor then built
// 2^59 strings in an empty buffer). A count too large saturates, so size limits refuse it.
#include <gtest/gtest.h>

#include <cstdint>

#include "onyx/dtype.h"
#include "onyx/error.h"
#include "onyx/tensor.h"

namespace onyx {
namespace {

TEST(StorageBytes, OverflowSaturatesInsteadOfWrapping) {
  EXPECT_EQ(StorageBytes(DataType::kString, int64_t{1} << 59), INT64_MAX);
  EXPECT_EQ(StorageBytes(DataType::kDouble, INT64_MAX / 4), INT64_MAX);
  EXPECT_EQ(StorageBytes(DataType::kInt4, INT64_MAX), INT64_MAX);
  EXPECT_EQ(StorageBytes(DataType::kFloat, 6), 24);
  EXPECT_EQ(StorageBytes(DataType::kInt4, 3), 2);
  EXPECT_EQ(StorageBytes(DataType::kUInt2, 5), 2);
}

TEST(StorageBytes, AHugeStringTensorIsAnErrorNotAnEmptyBuffer) {
  EXPECT_THROW(Tensor(DataType::kString, {int64_t{1} << 59}), Error);
  EXPECT_THROW(Tensor(DataType::kFloat, {int64_t{1} << 62}), Error);
}

}  // namespace
}  // namespace onyx
