// onyx.memory.packs_on_small_pages: "1"'s store puts packs of 2 MB or more on small-page mappings
// of their own and smaller ones on the shared huge-page slabs; "auto"'s does so only after a first
// touch of a fresh 2 MB page was slow (a host fault); a session with "1" makes its MatMul's pack
// there (and computes what a default session computes), one with "0" does not.
#include "runtime/small_page_packs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/aligned_memory.h"
#include "model_builder.h"
#include "onyx/session.h"

namespace onyx {
namespace {

TEST(SmallPagePacks, LargePacksAreSmallPageMappingsOfTheirOwn) {
  const auto store = PackStoreFor(PackPlacement::kSmallPages);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(PackStoreFor(PackPlacement::kHugePages), nullptr);  // fresh memory, as without a store
  int filled = 0;
  const auto fill = [&](void* p) { ++filled, std::memset(p, 7, 100); };
  PackedWeightStore::Blob large = store->Get("large", 3 * kHugePageBytes, fill);
  PackedWeightStore::Blob small = store->Get("small", 16384, fill);
  EXPECT_EQ(filled, 2);
  EXPECT_EQ(static_cast<const unsigned char*>(large.data)[99], 7);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data) % 64, 0u);
  EXPECT_TRUE(IsOwnSmallPageMapping(large.data));
  EXPECT_FALSE(IsOwnSmallPageMapping(small.data));
  void* const large_data = large.data;
  large = {};  // the pack's owner goes: so does its mapping
  EXPECT_FALSE(IsOwnSmallPageMapping(large_data));
}

TEST(SmallPagePacks, AutoMovesToSmallPagesAfterASlowFirstTouch) {
  const auto fill = [](void* p) { std::memset(p, 3, 64); };
  // Every first touch counts as slow: the first large pack stays where it is (on 2 MB pages), the
  // next ones go on small pages; packs under 2 MB stay on the slabs.
  const auto slow = PackStoreFor(PackPlacement::kAuto, std::chrono::nanoseconds(-1));
  PackedWeightStore::Blob first = slow->Get("a", 3 * kHugePageBytes, fill);
  PackedWeightStore::Blob second = slow->Get("b", 3 * kHugePageBytes, fill);
  PackedWeightStore::Blob small = slow->Get("c", 16384, fill);
  EXPECT_FALSE(IsOwnSmallPageMapping(first.data));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first.data) % kHugePageBytes, 0u);
  EXPECT_TRUE(IsOwnSmallPageMapping(second.data));
  EXPECT_FALSE(IsOwnSmallPageMapping(small.data));
  EXPECT_EQ(static_cast<const unsigned char*>(second.data)[63], 3);
  // Memory for a pack the store does not keep (int8 packs) follows the same verdict.
  PackedWeightStore::Blob fresh = slow->Fresh(3 * kHugePageBytes);
  EXPECT_TRUE(IsOwnSmallPageMapping(fresh.data));
  EXPECT_EQ(fresh.bytes, 3 * kHugePageBytes);
  // Never slow: every large pack on 2 MB pages. Each session has a store (and a verdict) of its own.
  const auto fast = PackStoreFor(PackPlacement::kAuto, std::chrono::hours(1));
  EXPECT_NE(fast, slow);
  for (const char* key : {"a", "b", "c"}) {
    PackedWeightStore::Blob large = fast->Get(key, 3 * kHugePageBytes, fill);
    EXPECT_FALSE(IsOwnSmallPageMapping(large.data)) << key;
    EXPECT_EQ(static_cast<const unsigned char*>(large.data)[0], 3) << key;  // the fill, after the touch
  }
  EXPECT_FALSE(IsOwnSmallPageMapping(fast->Fresh(3 * kHugePageBytes).data));
}

TEST(SmallPagePacks, ConfigValues) {
  EXPECT_EQ(PackPlacementFromConfig({}), PackPlacement::kAuto);
  EXPECT_EQ(PackPlacementFromConfig({{kConfigPacksOnSmallPages, "auto"}}), PackPlacement::kAuto);
  EXPECT_EQ(PackPlacementFromConfig({{kConfigPacksOnSmallPages, "0"}}), PackPlacement::kHugePages);
  EXPECT_EQ(PackPlacementFromConfig({{kConfigPacksOnSmallPages, "1"}}), PackPlacement::kSmallPages);
  EXPECT_THROW(PackPlacementFromConfig({{kConfigPacksOnSmallPages, "2"}}), Error);
}

// Bytes of the mappings in /proc/self/smaps that are advised against huge pages ("nh"), of at
// least `min_bytes` each: the own mappings of AllocateAlignedSmallPages.
int64_t NoHugePageMappingBytes(int64_t min_bytes) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  int64_t total = 0, size = 0;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      size = static_cast<int64_t>(end - begin);
    } else if (line.rfind("VmFlags:", 0) == 0 && line.find(" nh") != std::string::npos && size >= min_bytes) {
      total += size;
    }
  }
  return total;
}

// y = x [16, 1024] x W [1024, 1024]: W's pack is 4 MB.
std::string MatMulModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {16, 1024});
  b.Initializer("W", test::PatternTensor({1024, 1024}, 3));
  b.Node("MatMul", {"x", "W"}, {"y"});
  b.Output("y", DataType::kFloat, {16, 1024});
  return b.Bytes();
}

// A session of the model with the entry set to `value` ("" to leave it out), and how many bytes of
// small-page mappings of 4 MB or more its creation added.
std::unique_ptr<Session> MakeSession(const std::string& bytes, const std::string& value, int64_t* small_page_bytes) {
  SessionOptions options;
  if (!value.empty()) options.config_entries[kConfigPacksOnSmallPages] = value;
  const int64_t before = NoHugePageMappingBytes(4 << 20);
  auto session = std::make_unique<Session>(bytes.data(), bytes.size(), options);
  *small_page_bytes = NoHugePageMappingBytes(4 << 20) - before;
  return session;
}

// y = a [16, 1024] x B [1024, 4096] in int8 (MatMulInteger): B's int8 pack is 4 MB.
std::string MatMulIntegerModel() {
  Tensor w(DataType::kInt8, {1024, 4096});
  for (int64_t i = 0; i < w.size(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(i * 7 % 255 - 127);
  test::ModelBuilder b;
  b.Input("a", DataType::kUInt8, {16, 1024});
  b.Initializer("B", w);
  b.Node("MatMulInteger", {"a", "B"}, {"y"});
  b.Output("y", DataType::kInt32, {16, 4096});
  return b.Bytes();
}

// `got` computes the same bytes as `want` for input `name` = `in` (one output).
void ExpectSameOutput(Session& want, Session& got, const std::string& name, const Tensor& in) {
  const auto a = want.Run({{name, in}});
  const auto b = got.Run({{name, in}});
  ASSERT_EQ(b.size(), 1u);
  const Tensor& x = a[0].tensor();
  const Tensor& y = b[0].tensor();
  ASSERT_EQ(x.shape(), y.shape());
  EXPECT_EQ(std::memcmp(x.raw_data(), y.raw_data(), static_cast<size_t>(x.byte_size())), 0);
}

// Sessions of `bytes` with '0' and '1': with '1', at least 4 MB more of small-page mappings (the
// int8 pack of `what`), and the same bytes out for a uint8 input `name` of `shape`.
void ExpectInt8PackOnSmallPages(const std::string& bytes, const std::string& name, const Shape& shape,
                                const char* what) {
  int64_t off_bytes = 0, on_bytes = 0;
  const auto off = MakeSession(bytes, "0", &off_bytes);
  const auto on = MakeSession(bytes, "1", &on_bytes);
  EXPECT_GE(on_bytes - off_bytes, 4 << 20) << "the " << what << "'s pack is not on small pages";
  Tensor in(DataType::kUInt8, shape);
  for (int64_t i = 0; i < in.size(); ++i) in.data<uint8_t>()[i] = static_cast<uint8_t>(i * 13 % 256);
  ExpectSameOutput(*off, *on, name, in);
}

TEST(SmallPagePacks, SessionConfigPutsTheInt8PackOnSmallPagesToo) {
  ExpectInt8PackOnSmallPages(MatMulIntegerModel(), "a", {16, 1024}, "MatMulInteger");
}

// A QLinearConv with 1024 x 512 x 3 x 3 int8 weights (4.7 MB): whichever int8 conv path the CPU
// takes (channels-last direct, NCHW GEMM-W, or the GEMM), its pack is over 4 MB.
std::string QLinearConvModel() {
  test::ModelBuilder b;
  auto scalar = [&](const char* name, DataType type, double v) {
    Tensor t(type, {});
    if (type == DataType::kFloat) t.data<float>()[0] = static_cast<float>(v);
    else if (type == DataType::kUInt8) t.data<uint8_t>()[0] = static_cast<uint8_t>(v);
    else t.data<int8_t>()[0] = static_cast<int8_t>(v);
    b.Initializer(name, t);
  };
  Tensor w(DataType::kInt8, {1024, 512, 3, 3});
  for (int64_t i = 0; i < w.size(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(i * 7 % 255 - 127);
  b.Input("x", DataType::kUInt8, {1, 512, 7, 7});
  scalar("xs", DataType::kFloat, 0.02);
  scalar("xz", DataType::kUInt8, 128);
  b.Initializer("w", w);
  scalar("ws", DataType::kFloat, 0.001);
  scalar("wz", DataType::kInt8, 0);
  scalar("ys", DataType::kFloat, 0.5);
  scalar("yz", DataType::kUInt8, 128);
  b.Node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"y"})
      .attributes.push_back(test::IntsAttr("pads", {1, 1, 1, 1}));
  b.Output("y", DataType::kUInt8, {1, 1024, 7, 7});
  return b.Bytes();
}

TEST(SmallPagePacks, SessionConfigPutsTheInt8ConvPackOnSmallPagesToo) {
  ExpectInt8PackOnSmallPages(QLinearConvModel(), "x", {1, 512, 7, 7}, "QLinearConv");
}

TEST(SmallPagePacks, SessionConfigPutsTheMatMulPackOnSmallPages) {
  const std::string bytes = MatMulModel();
  int64_t plain_bytes = 0, off_bytes = 0, on_bytes = 0;
  // The default ("auto") times its first large pack and keeps it on 2 MB pages whatever it finds.
  const auto plain = MakeSession(bytes, "", &plain_bytes);
  const auto off = MakeSession(bytes, "0", &off_bytes);
  const auto on = MakeSession(bytes, "1", &on_bytes);
  // Whatever else a creation leaves on small pages (the loader's copy of W, where the kernel keeps
  // it) is the same in all three: the 4 MB pack makes the difference.
  EXPECT_EQ(off_bytes, plain_bytes);
  EXPECT_GE(on_bytes - plain_bytes, 4 << 20) << "the MatMul's pack is not on small pages";
  ExpectSameOutput(*plain, *on, "x", test::PatternTensor({16, 1024}, 5));
}

TEST(SmallPagePacks, RejectsAValueNotZeroOneOrAuto) {
  const std::string bytes = MatMulModel();
  SessionOptions options;
  options.config_entries[kConfigPacksOnSmallPages] = "yes";
  try {
    Session session(bytes.data(), bytes.size(), options);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(kConfigPacksOnSmallPages), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onyx
