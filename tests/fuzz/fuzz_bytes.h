// Reads the choices a harness makes from the fuzzer's bytes, front to back. Once the bytes run
// out every read returns zero, so any input (the empty one too) decodes to some case. Small
// and header-only: the replay build (g++, no libFuzzer) uses it as well.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace onyx::fuzz {

class FuzzBytes {
 public:
  FuzzBytes(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  bool empty() const { return p_ >= end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

  uint8_t Byte() { return p_ < end_ ? *p_++ : 0; }
  bool Bool() { return (Byte() & 1) != 0; }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | Byte();
    return v;
  }
  // A value in [0, n), n >= 1: one byte for small ranges, two otherwise.
  size_t Below(size_t n) {
    if (n <= 1) return 0;
    const size_t v = n <= 256 ? Byte() : (static_cast<size_t>(Byte()) << 8) | Byte();
    return v % n;
  }
  template <typename T>
  const T& Pick(const std::vector<T>& options) {
    return options[Below(options.size())];
  }
  // Small numbers mostly, and the extremes that break index and size arithmetic.
  int64_t Int() {
    static const int64_t kExtremes[] = {0, 1, 2, 3, -1, -2, 4, 7, 16, 1000003, int64_t{1} << 31, -(int64_t{1} << 31),
                                        int64_t{1} << 40, -(int64_t{1} << 40), INT64_MAX, INT64_MIN, int64_t{1} << 62};
    const uint8_t b = Byte();
    if (b < 160) return static_cast<int64_t>(b % 9) - 2;  // -2 .. 6
    if (b < 240) return kExtremes[b % (sizeof(kExtremes) / sizeof(kExtremes[0]))];
    return static_cast<int64_t>(U64());
  }
  float Float() {
    static const float kFloats[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 1e-45f, 1e38f, -1e38f,
                                    __builtin_inff(), -__builtin_inff(), __builtin_nanf("")};
    const uint8_t b = Byte();
    if (b < 200) return kFloats[b % (sizeof(kFloats) / sizeof(kFloats[0]))];
    uint32_t bits = static_cast<uint32_t>(U64());
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  // Up to `max` bytes taken as they come.
  std::string Bytes(size_t max) {
    const size_t n = Below(max + 1);
    const size_t take = n < remaining() ? n : remaining();
    std::string s(reinterpret_cast<const char*>(p_), take);
    p_ += take;
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// FNV-1a over the whole input: a seed for choices that must not consume the bytes (a model
// harness keeps every byte for the model).
inline uint64_t HashBytes(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

}  // namespace onyx::fuzz
