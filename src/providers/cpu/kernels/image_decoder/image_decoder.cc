// ImageDecoder (opset 20): decodes an encoded image (a 1-D uint8 tensor) into an [H, W, 3]
// RGB or BGR, or [H, W, 1] grayscale, uint8 tensor. JPEG, PNG, WebP and JPEG 2000 go through
// libjpeg, libpng, libwebp and openjpeg; BMP, PNM and baseline TIFF are decoded here.
// Grayscale is computed from RGB with ITU-R 601 weights (as Pillow's convert("L")).
#include <cstring>

#include "providers/cpu/kernels/image_decoder/image_formats.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class PixelFormat { kRgb, kBgr, kGray };

bool StartsWith(const uint8_t* d, size_t n, const char* magic, size_t len) {
  return n >= len && std::memcmp(d, magic, len) == 0;
}

image::RgbImage Decode(const KernelContext& ctx, const uint8_t* d, size_t n) {
  if (StartsWith(d, n, "\xFF\xD8\xFF", 3)) return image::DecodeJpeg(d, n);
  if (StartsWith(d, n, "\x89PNG\r\n\x1A\n", 8)) return image::DecodePng(d, n);
  if (StartsWith(d, n, "BM", 2)) return image::DecodeBmp(d, n);
  if (n >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6') return image::DecodePnm(d, n);
  if (StartsWith(d, n, "II*\0", 4) || StartsWith(d, n, "MM\0*", 4)) return image::DecodeTiff(d, n);
  if (n >= 12 && StartsWith(d, n, "RIFF", 4) && std::memcmp(d + 8, "WEBP", 4) == 0) return image::DecodeWebp(d, n);
  if (StartsWith(d, n, "\0\0\0\x0CjP  ", 8) || StartsWith(d, n, "\xFF\x4F\xFF\x51", 4))
    return image::DecodeJpeg2000(d, n);
  ctx.Fail("the data is not an image in a supported format (JPEG, PNG, BMP, PNM, TIFF, WebP, JPEG 2000)");
}

class ImageDecoder final : public OpKernel {
 public:
  explicit ImageDecoder(const KernelInfo& info) {
    const std::string f = info.GetStringOr("pixel_format", "RGB");
    if (f == "RGB") format_ = PixelFormat::kRgb;
    else if (f == "BGR") format_ = PixelFormat::kBgr;
    else if (f == "Grayscale") format_ = PixelFormat::kGray;
    else info.Fail(StrCat("pixel_format must be RGB, BGR or Grayscale, got '", f, "'"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& encoded = ctx.required_input(0);
    if (encoded.dtype() != DataType::kUInt8 || encoded.rank() != 1)
      ctx.Fail("the encoded image must be a 1-D uint8 tensor");
    const image::RgbImage img = Decode(ctx, encoded.data<uint8_t>(), static_cast<size_t>(encoded.size()));
    const int64_t pixels = img.height * img.width;
    const uint8_t* src = img.pixels.data();
    if (format_ == PixelFormat::kGray) {
      Tensor& out = ctx.AllocateOutput(0, DataType::kUInt8, {img.height, img.width, 1});
      uint8_t* dst = out.data<uint8_t>();
      for (int64_t i = 0; i < pixels; ++i) {
        const uint32_t r = src[3 * i], g = src[3 * i + 1], b = src[3 * i + 2];
        dst[i] = static_cast<uint8_t>((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16);
      }
      return;
    }
    Tensor& out = ctx.AllocateOutput(0, DataType::kUInt8, {img.height, img.width, 3});
    uint8_t* dst = out.data<uint8_t>();
    if (format_ == PixelFormat::kRgb) {
      std::memcpy(dst, src, static_cast<size_t>(pixels * 3));
    } else {
      for (int64_t i = 0; i < pixels; ++i) {
        dst[3 * i] = src[3 * i + 2];
        dst[3 * i + 1] = src[3 * i + 1];
        dst[3 * i + 2] = src[3 * i];
      }
    }
  }

 private:
  PixelFormat format_ = PixelFormat::kRgb;
};

ONYX_CPU_KERNEL("ImageDecoder", 20, kOpsetMax, ImageDecoder);

}  // namespace
}  // namespace onyx
