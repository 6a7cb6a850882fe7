// Image decoders for ImageDecoder. Each returns 8-bit interleaved RGB; failures throw
// Error(kRuntime) with a message naming the format and what is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace onyx::image {

struct RgbImage {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;  // height * width * 3, row-major RGB
};

// Images larger than this many pixels are refused (a corrupt header must not make us
// allocate gigabytes).
inline constexpr int64_t kMaxPixels = int64_t{1} << 28;

RgbImage DecodeJpeg(const uint8_t* data, size_t size);
RgbImage DecodePng(const uint8_t* data, size_t size);
RgbImage DecodeBmp(const uint8_t* data, size_t size);
RgbImage DecodePnm(const uint8_t* data, size_t size);
RgbImage DecodeTiff(const uint8_t* data, size_t size);
RgbImage DecodeWebp(const uint8_t* data, size_t size);
// JP2 files and raw J2K codestreams.
RgbImage DecodeJpeg2000(const uint8_t* data, size_t size);

}  // namespace onyx::image
