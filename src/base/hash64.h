// A fast non-cryptographic 64-bit hash for telling byte strings apart (the creation cache's keys
// and checksums), not for security: anyone who can write the bytes can choose their hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace onyx {

// The hash of `size` bytes at `data` (any alignment); seed picks another hash function.
uint64_t Hash64(const void* data, size_t size, uint64_t seed = 0);

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

}  // namespace onyx
