#include "base/hash64.h"

#include <cstring>

namespace onyx {

namespace {

// Odd 64-bit constants with well-mixed bits (multipliers for the lanes and the final mix).
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t Load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline uint64_t Round(uint64_t lane, uint64_t word) { return Rotl(lane + word * kP2, 31) * kP1; }

inline uint64_t Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

}  // namespace

// Four independent lanes over 32-byte stripes (the multiplies of one stripe overlap, so it runs
// near memory speed), folded together, then the tail word by word and byte by byte.
uint64_t Hash64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  size_t left = size;  // counted, not compared as pointers: data may be null when size is 0
  uint64_t h;
  if (left >= 32) {
    uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
    do {
      v1 = Round(v1, Load64(p));
      v2 = Round(v2, Load64(p + 8));
      v3 = Round(v3, Load64(p + 16));
      v4 = Round(v4, Load64(p + 24));
      p += 32;
      left -= 32;
    } while (left >= 32);
    h = Rotl(v1, 1) + Rotl(v2, 7) + Rotl(v3, 12) + Rotl(v4, 18);
    for (uint64_t v : {v1, v2, v3, v4}) h = (h ^ Round(0, v)) * kP1 + kP4;
  } else {
    h = seed + kP3;
  }
  h += static_cast<uint64_t>(size);
  for (; left >= 8; p += 8, left -= 8) h = Rotl(h ^ Round(0, Load64(p)), 27) * kP1 + kP4;
  for (; left > 0; ++p, --left) h = Rotl(h ^ (*p * kP3), 11) * kP1;
  return Avalanche(h);
}

Hasher64& Hasher64::Add(const void* data, size_t size) {
  state_ = Avalanche(state_ ^ Hash64(data, size, state_ + size));
  return *this;
}

}  // namespace onyx
