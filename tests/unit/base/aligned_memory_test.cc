#include "base/aligned_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace onyx {
namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// The VmFlags line of the mapping in /proc/self/smaps that holds p ("" when none does).
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= Address(p) && Address(p) < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool TransparentHugePagesOn() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(mode, text);
  return !text.empty() && text.find("[never]") == std::string::npos;
}

TEST(AlignedMemory, HonoursAlignmentAndKeepsBlocksApart) {
  const std::vector<size_t> sizes = {0, 1, 100, 4095, 4096, 70000, 1000000, (size_t{1} << 20) + 5,
                                     kHugePageBytes - 1, kHugePageBytes, 3 * kHugePageBytes + 123};
  std::vector<std::pair<unsigned char*, size_t>> blocks;
  for (bool share : {false, true}) {
    for (size_t alignment : {size_t{64}, size_t{4096}}) {
      for (size_t bytes : sizes) {
        auto* p = static_cast<unsigned char*>(AllocateAligned(bytes, alignment, share));
        ASSERT_NE(p, nullptr) << bytes;
        EXPECT_EQ(Address(p) % alignment, 0u) << bytes << " bytes at alignment " << alignment;
        if (bytes >= kHugePageBytes) {
          EXPECT_EQ(Address(p) % kHugePageBytes, 0u) << bytes;
        }
        std::memset(p, static_cast<int>(blocks.size() & 0xFF), bytes);
        blocks.emplace_back(p, bytes);
      }
    }
  }
  // Every block still holds its own fill: none overlaps another.
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto [p, bytes] = blocks[i];
    for (size_t j = 0; j < bytes; j += 997) ASSERT_EQ(p[j], i & 0xFF) << "block " << i << " byte " << j;
    if (bytes != 0) {
      ASSERT_EQ(p[bytes - 1], i & 0xFF) << "block " << i;
    }
  }
  for (auto [p, bytes] : blocks) FreeAligned(p);
  FreeAligned(nullptr);
}

TEST(AlignedMemory, SlabsAreReleasedAndReusedAcrossManyBlocks) {
  // Several slabs' worth of shared blocks, freed in an interleaved order, twice over: a slab
  // released while blocks still live in it would fail the fill check (or crash).
  for (int round = 0; round < 2; ++round) {
    std::vector<unsigned char*> blocks;
    for (int i = 0; i < 400; ++i) {
      auto* p = static_cast<unsigned char*>(AllocateAligned(60000 + 64 * i, 64, /*share_huge_pages=*/true));
      ASSERT_NE(p, nullptr);
      std::memset(p, i & 0xFF, 60000);
      blocks.push_back(p);
    }
    for (int i = 0; i < 400; i += 2) FreeAligned(blocks[i]);
    for (int i = 1; i < 400; i += 2) {
      ASSERT_EQ(blocks[i][0], i & 0xFF);
      ASSERT_EQ(blocks[i][59999], i & 0xFF);
      FreeAligned(blocks[i]);
    }
  }
}

TEST(AlignedMemory, BuffersAreAdvisedOntoHugePages) {
  if (!TransparentHugePagesOn()) GTEST_SKIP() << "transparent huge pages are off or absent on this system";
  const auto advised = [](size_t bytes, bool share) {
    void* p = AllocateAligned(bytes, 64, share);
    const bool hg = VmFlagsOf(p).find(" hg") != std::string::npos;
    FreeAligned(p);
    return hg;
  };
  EXPECT_TRUE(advised(5 * kHugePageBytes, false));
  EXPECT_TRUE(advised(5 * kHugePageBytes, true));
  // Small blocks share huge pages only when asked to; otherwise they stay with malloc.
  EXPECT_TRUE(advised(16384, true));
  EXPECT_TRUE(advised(1500000, true));
  EXPECT_FALSE(advised(16384, false));
  EXPECT_FALSE(advised(256, true));
}

TEST(AlignedMemory, TellsItsOwnSmallPageMappingsFromOtherMemory) {
  // Only the start of a live mapping of AllocateAlignedSmallPages counts: a fold may write over
  // such a block, never over a caller's buffer.
  void* own = AllocateAlignedSmallPages(kHugePageBytes + 100, 64);
  void* huge = AllocateAligned(kHugePageBytes, 64);
  void* from_malloc = AllocateAlignedSmallPages(100000, 64);
  std::vector<float> buffer(kHugePageBytes);
  EXPECT_TRUE(IsOwnSmallPageMapping(own));
  EXPECT_FALSE(IsOwnSmallPageMapping(static_cast<char*>(own) + 4096));
  EXPECT_FALSE(IsOwnSmallPageMapping(huge));
  EXPECT_FALSE(IsOwnSmallPageMapping(from_malloc));
  EXPECT_FALSE(IsOwnSmallPageMapping(buffer.data()));
  EXPECT_FALSE(IsOwnSmallPageMapping(nullptr));
  FreeAligned(own);
  EXPECT_FALSE(IsOwnSmallPageMapping(own));
  FreeAligned(huge);
  FreeAligned(from_malloc);
}

}  // namespace
}  // namespace onyx
