// Initializers whose bytes in the file are misaligned for their type are copied while loading;
// the copy goes on small pages (not advised onto huge pages), because most such copies live only
// until their weight is packed, and on a VM a fresh huge page costs a host fault for all 2 MB
// (docs/memory.md). Aligned bytes stay a view of the file.
#include <gtest/gtest.h>

#include <utility>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "base/aligned_memory.h"
#include "onnx/proto_decode.h"
#include "onnx/wire_writer.h"
#include "onyx/tensor.h"
#include "runtime/page_flags.h"

namespace onyx {
namespace {

using test::HugePageAdvised;
using test::HugePageRefused;
using test::ThpAvailable;
using test::VmFlagsOf;

struct Encoded {
  std::shared_ptr<std::vector<uint8_t>> bytes;
  const uint8_t* begin = nullptr;
  const uint8_t* end = nullptr;
  const uint8_t* raw = nullptr;
};

// A float TensorProto of `count` values i * 0.5 with raw_data starting `misalign` bytes past a
// 4-byte boundary.
Encoded FloatTensorProto(int64_t count, size_t misalign) {
  std::vector<float> values(static_cast<size_t>(count));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  proto::WireWriter t;
  t.PackedInt64(1, {count});
  t.Int64(2, static_cast<int64_t>(DataType::kFloat));
  t.Bytes(9, std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  const std::string& wire = t.data();
  const size_t raw_offset = wire.size() - values.size() * sizeof(float);  // raw_data is the last field
  Encoded e;
  e.bytes = std::make_shared<std::vector<uint8_t>>(wire.size() + 64);
  uint8_t* base = e.bytes->data();
  size_t shift = 0;
  while ((reinterpret_cast<uintptr_t>(base + shift + raw_offset) % 4) != misalign) ++shift;
  std::memcpy(base + shift, wire.data(), wire.size());
  e.begin = base + shift;
  e.end = e.begin + wire.size();
  e.raw = e.begin + raw_offset;
  return e;
}

Tensor Decode(const Encoded& e) {
  proto::DecodeContext ctx;
  ctx.source = "<test>";
  ctx.bytes_holder = e.bytes;
  return proto::DecodeTensor(proto::WireReader(e.begin, e.end, "tensor"), ctx);
}

constexpr int64_t kBigCount = int64_t{3} << 20;  // 12 MB of floats: large blocks are huge-page advised

TEST(MisalignedInitializer, CopyIsOnSmallPagesWithTheFileValues) {
  const Encoded e = FloatTensorProto(kBigCount, 2);
  Tensor t = Decode(e);
  const float* data = t.data<float>();
  ASSERT_FALSE(data >= reinterpret_cast<const void*>(e.begin) && data < reinterpret_cast<const void*>(e.end))
      << "a misaligned tensor must be copied, not viewed";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  EXPECT_EQ(data[0], 0.0f);
  EXPECT_EQ(data[12345], 12345 * 0.5f);
  EXPECT_EQ(data[kBigCount - 1], static_cast<float>(kBigCount - 1) * 0.5f);
  EXPECT_FALSE(HugePageAdvised(data)) << VmFlagsOf(data);
  // A mapping of its own, advised against huge pages (THP "always" would use them otherwise),
  // and unmapped when the copy is dropped, so dropping it lowers the resident size.
  EXPECT_TRUE(HugePageRefused(data)) << VmFlagsOf(data);
  t = Tensor();
  EXPECT_FALSE(HugePageRefused(data)) << VmFlagsOf(data);
  if (!ThpAvailable()) GTEST_SKIP() << "no transparent huge pages here: the contrast below needs them";
  // The contrast that makes the check above meaningful: an ordinary tensor of that size is advised.
  const Tensor ordinary(DataType::kFloat, {kBigCount});
  EXPECT_TRUE(HugePageAdvised(ordinary.data<float>())) << VmFlagsOf(ordinary.data<float>());
}

TEST(MisalignedInitializer, AlignedBytesStayAView) {
  const Encoded e = FloatTensorProto(1000, 0);
  const Tensor t = Decode(e);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(t.data<float>()), e.raw);
  EXPECT_EQ(t.data<float>()[999], 999 * 0.5f);
}

// How many of the pages of [p, p + bytes) are resident (mincore), and how many there are.
std::pair<size_t, size_t> ResidentPages(const void* p, size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p) / page * page;
  const size_t count = (reinterpret_cast<uintptr_t>(p) + bytes - begin + page - 1) / page;
  std::vector<unsigned char> flags(count);
  if (::mincore(reinterpret_cast<void*>(begin), count * page, flags.data()) != 0) return {0, count};
  size_t resident = 0;
  for (unsigned char f : flags) resident += f & 1;
  return {resident, count};
}

// Whether this kernel populates on request (MADV_POPULATE_WRITE, Linux 5.14).
bool KernelPopulatesOnRequest() {
#ifdef MADV_POPULATE_WRITE
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* p = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  const bool ok = ::madvise(p, page, MADV_POPULATE_WRITE) == 0;
  ::munmap(p, page);
  return ok;
#else
  return false;
#endif
}

// The copy's pages are faulted in by one call before it is written, not one trap per 4 KB page
// while copying (bert_base: 100k traps, a quarter of the copy's time).
TEST(MisalignedInitializer, CopyBlockIsResidentBeforeItIsWritten) {
  if (!KernelPopulatesOnRequest()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE: pages fault in as written";
  constexpr size_t kBytes = size_t{8} << 20;
  void* block = AllocateAlignedSmallPages(kBytes, 64);
  ASSERT_NE(block, nullptr);
  const auto [resident, pages] = ResidentPages(block, kBytes);
  FreeAligned(block);
  EXPECT_EQ(resident, pages) << "pages of a fresh small-page block not yet faulted in";
  // The contrast: a fresh mapping nobody populated is not resident.
  void* plain = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(plain, MAP_FAILED);
  EXPECT_EQ(ResidentPages(plain, kBytes).first, 0u);
  ::munmap(plain, kBytes);
}

}  // namespace
}  // namespace onyx
