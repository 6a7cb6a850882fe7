#include "base/hash64.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace onyx {

namespace hash64 {

void StripesScalar(uint64_t acc[kLanes], const uint8_t* p, size_t stripes) {
  for (size_t s = 0; s < stripes; ++s, p += kStripeBytes) {
    for (size_t i = 0; i < kLanes; ++i) {
      uint64_t d;
      std::memcpy(&d, p + 8 * i, sizeof(d));  // little-endian words (x86-64)
      const uint64_t x = d ^ kLaneKeys[i];
      const uint64_t t = acc[i] + (x & 0xFFFFFFFFULL) * (x >> 32);
      acc[i] = ((t << kLaneRotation) | (t >> (64 - kLaneRotation))) + d;
    }
  }
}

}  // namespace hash64

namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

bool CpuHasAvx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
bool CpuHasAvx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

struct Variant {
  const char* name;
  hash64::StripesFn fn;
  bool (*supported)();
};

// Best first; scalar last.
constexpr Variant kVariants[] = {
    {"avx512", hash64::StripesAvx512, CpuHasAvx512},
    {"avx2", hash64::StripesAvx2, CpuHasAvx2},
    {"scalar", hash64::StripesScalar, [] { return true; }},
};

const Variant* BestVariant() {
  for (const Variant& v : kVariants)
    if (v.supported()) return &v;
  return &kVariants[2];
}

std::atomic<const Variant*>& Chosen() {
  static std::atomic<const Variant*> chosen{BestVariant()};
  return chosen;
}

inline void Stripes(uint64_t* acc, const uint8_t* p, size_t stripes) {
  if (stripes > 0) Chosen().load(std::memory_order_relaxed)->fn(acc, p, stripes);
}

}  // namespace

std::vector<std::string> SupportedHash64Isas() {
  std::vector<std::string> isas;
  for (const Variant& v : kVariants)
    if (v.supported()) isas.push_back(v.name);
  return isas;
}

bool ForceHash64Isa(const std::string& isa) {
  if (isa == "auto") {
    Chosen().store(BestVariant());
    return true;
  }
  for (const Variant& v : kVariants)
    if (isa == v.name && v.supported()) {
      Chosen().store(&v);
      return true;
    }
  return false;
}

std::string Hash64IsaName() { return Chosen().load()->name; }

Hash64Stream::Hash64Stream(uint64_t seed) : seed_(seed) {
  for (size_t i = 0; i < hash64::kLanes; ++i) acc_[i] = Avalanche(seed + hash64::kLaneKeys[i]);
}

void Hash64Stream::Update(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  total_ += size;
  if (pending_bytes_ > 0) {  // complete the started stripe first
    const size_t take = std::min(size, hash64::kStripeBytes - pending_bytes_);
    std::memcpy(pending_ + pending_bytes_, p, take);
    pending_bytes_ += take;
    p += take;
    size -= take;
    if (pending_bytes_ < hash64::kStripeBytes) return;
    Stripes(acc_, pending_, 1);
    pending_bytes_ = 0;
  }
  const size_t stripes = size / hash64::kStripeBytes;
  Stripes(acc_, p, stripes);
  p += stripes * hash64::kStripeBytes;
  size -= stripes * hash64::kStripeBytes;
  if (size > 0) std::memcpy(pending_, p, size);  // size is 0 when data may be null
  pending_bytes_ = size;
}

uint64_t Hash64Stream::Digest() const {
  uint64_t acc[hash64::kLanes];
  std::memcpy(acc, acc_, sizeof(acc));
  if (pending_bytes_ > 0) {  // the last stripe, zero-padded (the length below tells the padding apart)
    uint8_t last[hash64::kStripeBytes] = {};
    std::memcpy(last, pending_, pending_bytes_);
    Stripes(acc, last, 1);
  }
  uint64_t h = seed_ ^ (total_ * kP1);
  for (uint64_t lane : acc) h = Rotl(h ^ Avalanche(lane), 27) * kP1 + kP4;
  return Avalanche(h ^ total_);
}

uint64_t Hash64(const void* data, size_t size, uint64_t seed) {
  Hash64Stream stream(seed);
  stream.Update(data, size);
  return stream.Digest();
}

Hasher64& Hasher64::Add(const void* data, size_t size) {
  state_ = Avalanche(state_ ^ Hash64(data, size, state_ + size));
  return *this;
}

}  // namespace onyx
