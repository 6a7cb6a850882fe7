// JPEG (libjpeg), PNG (libpng) and WebP (libwebp) decoding to 8-bit RGB.
// libjpeg and libpng report errors by longjmp: every C++ object that lives across setjmp is
// created before it and only its heap contents change afterwards.
#include <png.h>
#include <webp/decode.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "base/check.h"
#include "providers/cpu/kernels/image_decoder/image_formats.h"

// jpeglib.h needs size_t and FILE declared first.
#include <jpeglib.h>

namespace onyx::image {

namespace {

void CheckSize(const char* format, int64_t width, int64_t height) {
  ONYX_CHECK(width > 0 && height > 0 && width * height <= kMaxPixels, kRuntime, format,
             ": bad or too large image size ", width, "x", height);
}

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void OnJpegError(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

void OnJpegMessage(j_common_ptr, int) {}  // warnings (e.g. a truncated stream) are not errors

struct PngState {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  char message[256] = {};
};

void OnPngError(png_structp png, png_const_charp msg) {
  auto* state = static_cast<PngState*>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof(state->message), "%s", msg);
  png_longjmp(png, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}

void ReadPngBytes(png_structp png, png_bytep out, png_size_t n) {
  auto* state = static_cast<PngState*>(png_get_io_ptr(png));
  if (state->size - state->pos < n) png_error(png, "the data ends early");
  std::memcpy(out, state->data + state->pos, n);
  state->pos += n;
}

}  // namespace

RgbImage DecodeJpeg(const uint8_t* data, size_t size) {
  auto img = std::make_unique<RgbImage>();
  auto row = std::make_unique<std::vector<uint8_t>>();
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = OnJpegError;
  err.mgr.emit_message = OnJpegMessage;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    ONYX_THROW(kRuntime, "JPEG: ", err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  CheckSize("JPEG", cinfo.output_width, cinfo.output_height);
  img->width = cinfo.output_width;
  img->height = cinfo.output_height;
  img->pixels.resize(static_cast<size_t>(img->width * img->height * 3));
  const int channels = cinfo.output_components;
  row->resize(static_cast<size_t>(img->width * channels));
  // Adobe's CMYK JPEGs store inverted values.
  const bool inverted = cinfo.saw_Adobe_marker;
  while (cinfo.output_scanline < cinfo.output_height) {
    const size_t y = cinfo.output_scanline;
    JSAMPROW rows[1] = {row->data()};
    jpeg_read_scanlines(&cinfo, rows, 1);
    uint8_t* out = img->pixels.data() + y * static_cast<size_t>(img->width) * 3;
    if (!cmyk) {
      std::memcpy(out, row->data(), static_cast<size_t>(img->width) * 3);
      continue;
    }
    for (int64_t x = 0; x < img->width; ++x) {
      const uint8_t* p = row->data() + x * 4;
      for (int c = 0; c < 3; ++c) {
        const uint32_t v = inverted ? p[c] : 255 - p[c];
        const uint32_t k = inverted ? p[3] : 255 - p[3];
        out[x * 3 + c] = static_cast<uint8_t>((v * k + 127) / 255);
      }
    }
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return std::move(*img);
}

RgbImage DecodePng(const uint8_t* data, size_t size) {
  auto img = std::make_unique<RgbImage>();
  auto rows = std::make_unique<std::vector<png_bytep>>();
  PngState state;
  state.data = data;
  state.size = size;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, OnPngError, OnPngWarning);
  ONYX_CHECK(png != nullptr, kOutOfMemory, "PNG: cannot create a decoder");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    ONYX_THROW(kOutOfMemory, "PNG: cannot create a decoder");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    ONYX_THROW(kRuntime, "PNG: ", state.message);
  }
  png_set_read_fn(png, &state, ReadPngBytes);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  if (width == 0 || height == 0 || static_cast<int64_t>(width) * height > kMaxPixels)
    png_error(png, "bad or too large image size");
  // Everything to 8-bit RGB: palettes and low bit depths expanded, 16 bits cut to their high
  // byte, gray replicated, alpha dropped (not composited).
  png_set_expand(png);
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != static_cast<size_t>(width) * 3) png_error(png, "unexpected pixel layout");
  img->width = width;
  img->height = height;
  img->pixels.resize(static_cast<size_t>(width) * height * 3);
  rows->resize(height);
  for (png_uint_32 y = 0; y < height; ++y) (*rows)[y] = img->pixels.data() + static_cast<size_t>(y) * width * 3;
  png_read_image(png, rows->data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return std::move(*img);
}

RgbImage DecodeWebp(const uint8_t* data, size_t size) {
  int width = 0, height = 0;
  uint8_t* pixels = WebPDecodeRGB(data, size, &width, &height);
  ONYX_CHECK(pixels != nullptr, kRuntime, "WebP: the data could not be decoded");
  std::unique_ptr<uint8_t, void (*)(void*)> owner(pixels, WebPFree);
  CheckSize("WebP", width, height);
  RgbImage img;
  img.width = width;
  img.height = height;
  img.pixels.assign(pixels, pixels + static_cast<size_t>(width) * height * 3);
  return img;
}

}  // namespace onyx::image
