// The stripe kernels of Hash64 (hash64.cc): eight 64-bit lanes, each taking one 8-byte word of
// every 64-byte stripe. Every ISA variant computes exactly the same lanes as the scalar one
// (tests/unit/base/hash64_test.cc holds them to it), so a hash never depends on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>

namespace onyx::hash64 {

inline constexpr size_t kLanes = 8;
inline constexpr size_t kStripeBytes = 64;

// Per-lane keys, xor-ed into the words before the multiply (odd, well-mixed constants).
inline constexpr uint64_t kLaneKeys[kLanes] = {0x2cb0f69f4abea221ULL, 0x9417034723148989ULL, 0xdd555950609dfe03ULL,
                                               0xdbafb150deb12801ULL, 0x7e789b2e6c442cb7ULL, 0xf41e5636c7e4f8c5ULL,
                                               0x0959d150f8fba7e5ULL, 0xa97316f13cdb9eebULL};
inline constexpr int kLaneRotation = 29;

// Folds `stripes` 64-byte stripes at `p` (any alignment) into acc: for each lane word d,
// x = d ^ key; acc = rotl(acc + lo32(x) * hi32(x), 29) + d. The multiply spreads the word's bits,
// the rotation makes the stripes' order count, the plain add keeps every bit of d.
using StripesFn = void (*)(uint64_t acc[kLanes], const uint8_t* p, size_t stripes);
void StripesScalar(uint64_t acc[kLanes], const uint8_t* p, size_t stripes);
void StripesAvx2(uint64_t acc[kLanes], const uint8_t* p, size_t stripes);
void StripesAvx512(uint64_t acc[kLanes], const uint8_t* p, size_t stripes);

}  // namespace onyx::hash64
