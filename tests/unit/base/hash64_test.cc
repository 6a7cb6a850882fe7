// Hash64: every stripe kernel (AVX-512, AVX2) gives the scalar kernel's lanes, and Hash64 equals
// a plain transcription of its definition, on odd lengths and alignments; pieces fed to
// Hash64Stream hash as the whole; one changed bit anywhere, the last byte included, changes it.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/hash64.h"

namespace onyx {
namespace {

// The definition, one byte at a time: lanes start at Avalanche(seed + key[i]); stripe word d of
// lane i: x = d ^ key[i], acc = rotl(acc + lo32(x) * hi32(x), 29) + d; a last partial stripe is
// zero-padded; then h = seed ^ (n * P1), for each lane h = rotl(h ^ Avalanche(acc), 27) * P1 + P4,
// and the hash is Avalanche(h ^ n).
uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
uint64_t Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= 0xC2B2AE3D27D4EB4FULL;
  h ^= h >> 29;
  h *= 0x165667B19E3779F9ULL;
  h ^= h >> 32;
  return h;
}

uint64_t ReferenceHash(const uint8_t* p, size_t n, uint64_t seed) {
  constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL, kP4 = 0x85EBCA77C2B2AE63ULL;
  uint64_t acc[8];
  for (int i = 0; i < 8; ++i) acc[i] = Avalanche(seed + hash64::kLaneKeys[i]);
  for (size_t start = 0; start < n; start += 64) {
    for (int i = 0; i < 8; ++i) {
      uint64_t d = 0;
      for (int b = 0; b < 8; ++b) {
        const size_t at = start + 8 * i + b;
        if (at < n) d |= uint64_t{p[at]} << (8 * b);
      }
      const uint64_t x = d ^ hash64::kLaneKeys[i];
      acc[i] = Rotl(acc[i] + (x & 0xFFFFFFFFULL) * (x >> 32), 29) + d;
    }
  }
  uint64_t h = seed ^ (n * kP1);
  for (uint64_t a : acc) h = Rotl(h ^ Avalanche(a), 27) * kP1 + kP4;
  return Avalanche(h ^ n);
}

std::vector<uint8_t> RandomBytes(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

class Hash64Isa : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!ForceHash64Isa(GetParam())) GTEST_SKIP() << GetParam() << " is not supported by this CPU";
  }
  void TearDown() override { ForceHash64Isa("auto"); }
};

TEST_P(Hash64Isa, StripesMatchScalar) {
  const hash64::StripesFn fn = GetParam() == "avx512" ? hash64::StripesAvx512
                               : GetParam() == "avx2" ? hash64::StripesAvx2
                                                      : hash64::StripesScalar;
  const std::vector<uint8_t> data = RandomBytes(64 * 37 + 7, 1);
  for (size_t offset : {0, 1, 3, 7}) {
    for (size_t stripes : {0, 1, 2, 5, 36}) {
      uint64_t want[8], got[8];
      for (int i = 0; i < 8; ++i) want[i] = got[i] = 0x1234567ULL * (i + 1) + offset;
      hash64::StripesScalar(want, data.data() + offset, stripes);
      fn(got, data.data() + offset, stripes);
      for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], want[i]) << "lane " << i << " offset " << offset << " stripes " << stripes;
    }
  }
}

TEST_P(Hash64Isa, MatchesTheDefinitionOnOddLengthsAndAlignments) {
  ASSERT_EQ(Hash64IsaName(), GetParam());
  const std::vector<uint8_t> data = RandomBytes(5000, 2);
  for (size_t offset : {0, 1, 5, 63}) {
    for (size_t n : {0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 1000, 4093}) {
      for (uint64_t seed : {uint64_t{0}, uint64_t{17}}) {
        EXPECT_EQ(Hash64(data.data() + offset, n, seed), ReferenceHash(data.data() + offset, n, seed))
            << "n " << n << " offset " << offset << " seed " << seed;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, Hash64Isa, ::testing::Values("avx512", "avx2", "scalar"));

TEST(Hash64, StreamPiecesHashAsTheWhole) {
  const std::vector<uint8_t> data = RandomBytes(700, 3);
  const uint64_t whole = Hash64(data.data(), data.size(), 9);
  for (size_t cut1 : {0, 1, 63, 64, 100}) {
    for (size_t cut2 : {cut1, cut1 + 1, cut1 + 64, size_t{650}}) {
      Hash64Stream s(9);
      s.Update(data.data(), cut1);
      s.Update(data.data() + cut1, cut2 - cut1);
      s.Update(data.data() + cut2, data.size() - cut2);
      EXPECT_EQ(s.Digest(), whole) << cut1 << " " << cut2;
    }
  }
  Hash64Stream empty;
  empty.Update(nullptr, 0);
  EXPECT_EQ(empty.Digest(), Hash64(nullptr, 0));
}

TEST(Hash64, EveryBitCounts) {
  for (size_t n : {1, 64, 65, 1000}) {
    std::vector<uint8_t> data = RandomBytes(n, 4);
    const uint64_t h = Hash64(data.data(), n);
    for (size_t at : {size_t{0}, n / 2, n - 1}) {
      for (int bit : {0, 7}) {
        data[at] ^= static_cast<uint8_t>(1 << bit);
        EXPECT_NE(Hash64(data.data(), n), h) << "n " << n << " byte " << at << " bit " << bit;
        data[at] ^= static_cast<uint8_t>(1 << bit);
      }
    }
    // Zero padding is told apart from real zeros by the length.
    std::vector<uint8_t> zeros(n + 1, 0);
    EXPECT_NE(Hash64(zeros.data(), n), Hash64(zeros.data(), n + 1));
  }
  // Stripes swapped, and words swapped between lanes, change the hash.
  std::vector<uint8_t> data = RandomBytes(128, 5);
  const uint64_t h = Hash64(data.data(), data.size());
  std::vector<uint8_t> swapped(data.begin() + 64, data.end());
  swapped.insert(swapped.end(), data.begin(), data.begin() + 64);
  EXPECT_NE(Hash64(swapped.data(), swapped.size()), h);
  std::vector<uint8_t> lanes = data;
  std::memcpy(lanes.data(), data.data() + 8, 8);
  std::memcpy(lanes.data() + 8, data.data(), 8);
  EXPECT_NE(Hash64(lanes.data(), lanes.size()), h);
}

}  // namespace
}  // namespace onyx
