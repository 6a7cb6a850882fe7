// JPEG 2000 (JP2 files and raw J2K codestreams) decoding to 8-bit RGB through openjpeg.
// Samples are brought to 8 bits the way Pillow (the ONNX reference decoder) does: signed
// samples are offset to unsigned, then shifted by (8 - precision) bits.
#include <openjpeg.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "base/check.h"
#include "providers/cpu/kernels/image_decoder/image_formats.h"

namespace onyx::image {

namespace {

// Reads from the caller's buffer; openjpeg pulls the stream through these callbacks.
struct MemoryStream {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
};

OPJ_SIZE_T ReadBytes(void* buffer, OPJ_SIZE_T n, void* user) {
  auto* s = static_cast<MemoryStream*>(user);
  if (s->pos >= s->size) return static_cast<OPJ_SIZE_T>(-1);  // openjpeg's end-of-stream value
  const size_t count = std::min<size_t>(n, s->size - s->pos);
  std::memcpy(buffer, s->data + s->pos, count);
  s->pos += count;
  return count;
}

OPJ_OFF_T SkipBytes(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<MemoryStream*>(user);
  if (n < 0) {
    const size_t back = std::min<size_t>(static_cast<size_t>(-n), s->pos);
    s->pos -= back;
    return -static_cast<OPJ_OFF_T>(back);
  }
  const size_t forward = std::min<size_t>(static_cast<size_t>(n), s->size - s->pos);
  s->pos += forward;
  return static_cast<OPJ_OFF_T>(forward);
}

OPJ_BOOL SeekBytes(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<MemoryStream*>(user);
  if (n < 0 || static_cast<uint64_t>(n) > s->size) return OPJ_FALSE;
  s->pos = static_cast<size_t>(n);
  return OPJ_TRUE;
}

// The first error openjpeg reports, for the exception message.
void OnError(const char* msg, void* user) {
  auto* message = static_cast<std::string*>(user);
  if (!message->empty()) return;
  *message = msg;
  while (!message->empty() && (message->back() == '\n' || message->back() == ' ')) message->pop_back();
}

void OnIgnored(const char*, void*) {}

struct CodecDeleter {
  void operator()(opj_codec_t* c) const { opj_destroy_codec(c); }
};
struct StreamDeleter {
  void operator()(opj_stream_t* s) const { opj_stream_destroy(s); }
};
struct ImageDeleter {
  void operator()(opj_image_t* i) const { opj_image_destroy(i); }
};

// One component's samples at reference-grid position (x, y), in 8 bits.
class ComponentReader {
 public:
  explicit ComponentReader(const opj_image_comp_t& c)
      : comp_(c),
        offset_(c.sgnd ? int64_t{1} << (c.prec - 1) : 0),
        max_((int64_t{1} << c.prec) - 1),
        shift_(8 - static_cast<int>(c.prec)) {}

  uint8_t At(int64_t x, int64_t y) const {
    const int64_t cx = std::min<int64_t>(x / comp_.dx, comp_.w - 1);
    const int64_t cy = std::min<int64_t>(y / comp_.dy, comp_.h - 1);
    const int64_t v = std::clamp<int64_t>(comp_.data[cy * comp_.w + cx] + offset_, 0, max_);
    return static_cast<uint8_t>(shift_ >= 0 ? std::min<int64_t>(v << shift_, 255) : v >> -shift_);
  }

 private:
  const opj_image_comp_t& comp_;
  int64_t offset_;
  int64_t max_;
  int shift_;
};

uint8_t ClampByte(double v) { return static_cast<uint8_t>(std::clamp(v + 0.5, 0.0, 255.0)); }

}  // namespace

RgbImage DecodeJpeg2000(const uint8_t* data, size_t size) {
  const bool jp2 = size >= 4 && std::memcmp(data, "\0\0\0\x0C", 4) == 0;
  std::string message;
  std::unique_ptr<opj_codec_t, CodecDeleter> codec(opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K));
  ONYX_CHECK(codec != nullptr, kOutOfMemory, "JPEG 2000: cannot create a decoder");
  opj_set_error_handler(codec.get(), OnError, &message);
  opj_set_warning_handler(codec.get(), OnIgnored, nullptr);
  opj_set_info_handler(codec.get(), OnIgnored, nullptr);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  ONYX_CHECK(opj_setup_decoder(codec.get(), &params), kRuntime, "JPEG 2000: decoder setup failed: ", message);

  MemoryStream source{data, size, 0};
  std::unique_ptr<opj_stream_t, StreamDeleter> stream(opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE));
  ONYX_CHECK(stream != nullptr, kOutOfMemory, "JPEG 2000: cannot create a stream");
  opj_stream_set_user_data(stream.get(), &source, nullptr);
  opj_stream_set_user_data_length(stream.get(), size);
  opj_stream_set_read_function(stream.get(), ReadBytes);
  opj_stream_set_skip_function(stream.get(), SkipBytes);
  opj_stream_set_seek_function(stream.get(), SeekBytes);

  opj_image_t* raw = nullptr;
  const bool header_ok = opj_read_header(stream.get(), codec.get(), &raw);
  std::unique_ptr<opj_image_t, ImageDeleter> image(raw);
  ONYX_CHECK(header_ok && image != nullptr, kRuntime, "JPEG 2000: bad header: ", message);
  // Size checks before decoding, so a corrupt header cannot make openjpeg allocate gigabytes.
  const int64_t width = static_cast<int64_t>(image->x1) - image->x0;
  const int64_t height = static_cast<int64_t>(image->y1) - image->y0;
  ONYX_CHECK(width > 0 && height > 0 && width * height <= kMaxPixels, kRuntime,
             "JPEG 2000: bad or too large image size ", width, "x", height);
  ONYX_CHECK(image->numcomps >= 1, kRuntime, "JPEG 2000: the image has no components");
  // openjpeg decodes every component into 32-bit samples: bound their total like an RGB image.
  int64_t samples = 0;
  for (uint32_t c = 0; c < image->numcomps; ++c) {
    const opj_image_comp_t& comp = image->comps[c];
    ONYX_CHECK(comp.dx > 0 && comp.dy > 0, kRuntime, "JPEG 2000: component ", c, " has a zero subsampling step");
    samples += ((width + comp.dx - 1) / comp.dx) * ((height + comp.dy - 1) / comp.dy);
    ONYX_CHECK(samples <= 3 * kMaxPixels, kRuntime, "JPEG 2000: too many samples (", image->numcomps,
               " components of ", width, "x", height, ")");
  }
  ONYX_CHECK(opj_decode(codec.get(), stream.get(), image.get()) && opj_end_decompress(codec.get(), stream.get()),
             kRuntime, "JPEG 2000: ", message.empty() ? "the data could not be decoded" : message);

  const uint32_t channels = image->numcomps;
  const OPJ_COLOR_SPACE space = image->color_space;
  const bool gray = channels < 3 || space == OPJ_CLRSPC_GRAY;
  const uint32_t used = gray ? 1 : (space == OPJ_CLRSPC_CMYK && channels >= 4 ? 4 : 3);
  for (uint32_t c = 0; c < used; ++c) {
    const opj_image_comp_t& comp = image->comps[c];
    ONYX_CHECK(comp.data != nullptr && comp.w > 0 && comp.h > 0, kRuntime,
               "JPEG 2000: component ", c, " was not decoded");
    ONYX_CHECK(comp.prec >= 1 && comp.prec <= 31, kRuntime, "JPEG 2000: unsupported sample precision ", comp.prec);
  }

  RgbImage img;
  img.width = width;
  img.height = height;
  img.pixels.resize(static_cast<size_t>(width * height * 3));
  ComponentReader r0(image->comps[0]);
  if (gray) {
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x) {
        uint8_t* out = img.pixels.data() + (y * width + x) * 3;
        out[0] = out[1] = out[2] = r0.At(x, y);
      }
    return img;
  }
  ComponentReader r1(image->comps[1]), r2(image->comps[2]);
  std::unique_ptr<ComponentReader> r3;
  if (used == 4) r3 = std::make_unique<ComponentReader>(image->comps[3]);
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      uint8_t* out = img.pixels.data() + (y * width + x) * 3;
      const int a = r0.At(x, y), b = r1.At(x, y), c = r2.At(x, y);
      if (space == OPJ_CLRSPC_SYCC || space == OPJ_CLRSPC_EYCC) {
        // Full-range YCbCr (ITU-R BT.601, as JFIF). e-sYCC uses the same matrix; its wider range
        // (signed chroma) is what ComponentReader's offset already centres.
        out[0] = ClampByte(a + 1.402 * (c - 128));
        out[1] = ClampByte(a - 0.344136 * (b - 128) - 0.714136 * (c - 128));
        out[2] = ClampByte(a + 1.772 * (b - 128));
      } else if (r3 != nullptr) {
        const uint32_t k = 255 - r3->At(x, y);
        out[0] = static_cast<uint8_t>(((255 - a) * k + 127) / 255);
        out[1] = static_cast<uint8_t>(((255 - b) * k + 127) / 255);
        out[2] = static_cast<uint8_t>(((255 - c) * k + 127) / 255);
      } else {
        out[0] = static_cast<uint8_t>(a);
        out[1] = static_cast<uint8_t>(b);
        out[2] = static_cast<uint8_t>(c);
      }
    }
  }
  return img;
}

}  // namespace onyx::image
