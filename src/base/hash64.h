// A fast non-cryptographic 64-bit hash for telling byte strings apart (the creation cache's keys
// and checksums, and the content hash of every model byte), not for security: anyone who can
// write the bytes can choose their hash. It runs at memory speed (eight multiply-mix lanes over
// 64-byte stripes, AVX-512 / AVX2 / scalar: the same value on every CPU).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/hash64_kernel.h"

namespace onyx {

// The hash of `size` bytes at `data` (any alignment); seed picks another hash function.
uint64_t Hash64(const void* data, size_t size, uint64_t seed = 0);

// Hash64 of bytes given piece by piece: Update("ab"), Update("c") digests as Hash64("abc").
class Hash64Stream {
 public:
  explicit Hash64Stream(uint64_t seed = 0);
  void Update(const void* data, size_t size);
  uint64_t Digest() const;

 private:
  uint64_t acc_[hash64::kLanes];
  uint8_t pending_[hash64::kStripeBytes];  // the start of a stripe not yet full
  size_t pending_bytes_ = 0;
  uint64_t total_ = 0;
  uint64_t seed_;
};

// Hashes a sequence of pieces; each piece's length is hashed too, so ("ab", "c") and ("a", "bc")
// differ.
class Hasher64 {
 public:
  explicit Hasher64(uint64_t seed = 0) : state_(seed) {}
  Hasher64& Add(const void* data, size_t size);
  Hasher64& Add(const std::string& text) { return Add(text.data(), text.size()); }
  Hasher64& AddU64(uint64_t value) { return Add(&value, sizeof(value)); }
  uint64_t Digest() const { return state_; }

 private:
  uint64_t state_;
};

// The stripe kernels this CPU can run, best first ("avx512", "avx2", "scalar"); forcing one (for
// tests: "auto" is the best) returns false when the CPU lacks it.
std::vector<std::string> SupportedHash64Isas();
bool ForceHash64Isa(const std::string& isa);
std::string Hash64IsaName();

}  // namespace onyx
