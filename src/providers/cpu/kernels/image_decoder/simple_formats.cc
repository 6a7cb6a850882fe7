// BMP, PNM (P1-P6) and baseline TIFF decoding to 8-bit RGB. Every read is bounds-checked:
// corrupt files fail with an error, never read past the data.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "base/check.h"
#include "providers/cpu/kernels/image_decoder/image_formats.h"

namespace onyx::image {

namespace {

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size, const char* format, bool big_endian = false)
      : data_(data), size_(size), format_(format), big_endian_(big_endian) {}
  void Need(size_t offset, size_t len) const {
    ONYX_CHECK(offset <= size_ && len <= size_ - offset, kRuntime, format_, ": the data ends early (needs ", len,
               " bytes at offset ", offset, " of ", size_, ")");
  }
  uint8_t U8(size_t at) const {
    Need(at, 1);
    return data_[at];
  }
  uint32_t U16(size_t at) const {
    Need(at, 2);
    return big_endian_ ? (data_[at] << 8) | data_[at + 1] : data_[at] | (data_[at + 1] << 8);
  }
  uint32_t U32(size_t at) const {
    Need(at, 4);
    if (big_endian_)
      return (uint32_t{data_[at]} << 24) | (uint32_t{data_[at + 1]} << 16) | (uint32_t{data_[at + 2]} << 8) |
             data_[at + 3];
    return data_[at] | (uint32_t{data_[at + 1]} << 8) | (uint32_t{data_[at + 2]} << 16) |
           (uint32_t{data_[at + 3]} << 24);
  }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  const char* format_;
  bool big_endian_;
};

RgbImage Allocate(const char* format, int64_t width, int64_t height) {
  ONYX_CHECK(width > 0 && height > 0 && width * height <= kMaxPixels, kRuntime, format,
             ": bad or too large image size ", width, "x", height);
  RgbImage img;
  img.width = width;
  img.height = height;
  img.pixels.assign(static_cast<size_t>(width * height * 3), 0);
  return img;
}

// A channel under a bit mask, scaled to 8 bits.
struct MaskChannel {
  uint32_t mask = 0;
  int shift = 0;
  uint32_t max = 0;
  explicit MaskChannel(uint32_t m) : mask(m) {
    if (m == 0) return;
    while (((m >> shift) & 1) == 0) ++shift;
    max = m >> shift;
  }
  uint8_t Get(uint32_t v) const {
    if (max == 0) return 0;
    return static_cast<uint8_t>((((v & mask) >> shift) * 255 + max / 2) / max);
  }
};

}  // namespace

RgbImage DecodeBmp(const uint8_t* data, size_t size) {
  const Bytes b(data, size, "BMP");
  const uint32_t pixel_offset = b.U32(10);
  const uint32_t header = b.U32(14);
  int64_t width, height;
  uint32_t bpp, compression = 0, colors_used = 0;
  size_t palette_entry = 4;
  if (header == 12) {
    width = b.U16(18);
    height = static_cast<int16_t>(b.U16(20));
    bpp = b.U16(24);
    palette_entry = 3;
  } else {
    ONYX_CHECK(header >= 40, kRuntime, "BMP: unsupported header size ", header);
    width = static_cast<int32_t>(b.U32(18));
    height = static_cast<int32_t>(b.U32(22));
    bpp = b.U16(28);
    compression = b.U32(30);
    colors_used = b.U32(46);
  }
  const bool top_down = height < 0;
  height = std::abs(height);
  const bool rle = compression == 1 || compression == 2;
  const size_t stride = static_cast<size_t>((width * bpp + 31) / 32 * 4);
  // Uncompressed data must be all there before we allocate for it.
  if (!rle && width > 0 && height > 0 && width * height <= kMaxPixels)
    b.Need(pixel_offset, stride * static_cast<size_t>(height));
  RgbImage img = Allocate("BMP", width, height);

  // Channel masks for 16 and 32 bits.
  uint32_t masks[3] = {0, 0, 0};
  if (compression == 3 || compression == 6) {
    const size_t at = header >= 52 ? 54 : 14 + header;
    for (int c = 0; c < 3; ++c) masks[c] = b.U32(at + 4 * c);
  } else if (bpp == 16) {
    masks[0] = 0x7C00, masks[1] = 0x03E0, masks[2] = 0x001F;
  } else if (bpp == 32) {
    masks[0] = 0x00FF0000, masks[1] = 0x0000FF00, masks[2] = 0x000000FF;
  }
  const MaskChannel red(masks[0]), green(masks[1]), blue(masks[2]);

  std::vector<uint8_t> palette;  // RGB triples
  if (bpp <= 8) {
    const size_t count = colors_used ? std::min<size_t>(colors_used, 256) : (size_t{1} << bpp);
    const size_t at = 14 + header + ((compression == 3 || compression == 6) && header == 40 ? 12 : 0);
    b.Need(at, count * palette_entry);
    for (size_t i = 0; i < count; ++i) {
      palette.push_back(data[at + i * palette_entry + 2]);
      palette.push_back(data[at + i * palette_entry + 1]);
      palette.push_back(data[at + i * palette_entry]);
    }
  }
  auto put_index = [&](int64_t x, int64_t y, uint32_t index) {
    if (x < 0 || x >= width || y < 0 || y >= height) return;
    ONYX_CHECK(index * 3 + 2 < palette.size(), kRuntime, "BMP: colour index ", index, " is past the palette");
    const int64_t row = top_down ? y : height - 1 - y;
    std::memcpy(&img.pixels[static_cast<size_t>((row * width + x) * 3)], &palette[index * 3], 3);
  };

  if (rle) {
    // RLE8 / RLE4: runs and escapes, rows bottom-up.
    ONYX_CHECK(bpp == (compression == 1 ? 8u : 4u), kRuntime, "BMP: RLE compression with ", bpp, " bits per pixel");
    size_t at = pixel_offset;
    int64_t x = 0, y = 0;
    while (true) {
      const uint8_t count = b.U8(at), value = b.U8(at + 1);
      at += 2;
      if (count > 0) {
        for (int k = 0; k < count; ++k, ++x)
          put_index(x, y, compression == 1 ? value : (k % 2 == 0 ? value >> 4 : value & 15));
      } else if (value == 0) {
        x = 0, ++y;
      } else if (value == 1) {
        break;
      } else if (value == 2) {
        x += b.U8(at), y += b.U8(at + 1);
        at += 2;
      } else {
        const size_t bytes = compression == 1 ? value : (value + 1) / 2;
        b.Need(at, bytes);
        for (int k = 0; k < value; ++k, ++x)
          put_index(x, y,
                    compression == 1 ? data[at + k] : (k % 2 == 0 ? data[at + k / 2] >> 4 : data[at + k / 2] & 15));
        at += (bytes + 1) / 2 * 2;  // runs are word-aligned
      }
      if (y >= height) break;
    }
    return img;
  }
  ONYX_CHECK(compression == 0 || compression == 3 || compression == 6, kRuntime, "BMP: unsupported compression ",
             compression);
  ONYX_CHECK(bpp == 1 || bpp == 4 || bpp == 8 || bpp == 16 || bpp == 24 || bpp == 32, kRuntime,
             "BMP: unsupported bit depth ", bpp);
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* row = data + pixel_offset + stride * static_cast<size_t>(y);
    const int64_t out_row = top_down ? y : height - 1 - y;
    uint8_t* out = img.pixels.data() + out_row * width * 3;
    for (int64_t x = 0; x < width; ++x) {
      if (bpp <= 8) {
        const uint32_t bits = static_cast<uint32_t>(x * bpp);
        const uint32_t index = (row[bits / 8] >> (8 - bpp - bits % 8)) & ((1u << bpp) - 1);
        ONYX_CHECK(index * 3 + 2 < palette.size(), kRuntime, "BMP: colour index ", index, " is past the palette");
        std::memcpy(out + x * 3, &palette[index * 3], 3);
      } else if (bpp == 24) {
        out[x * 3] = row[x * 3 + 2];
        out[x * 3 + 1] = row[x * 3 + 1];
        out[x * 3 + 2] = row[x * 3];
      } else {
        const uint32_t v =
            bpp == 16
                ? (row[x * 2] | (row[x * 2 + 1] << 8))
                : (row[x * 4] | (row[x * 4 + 1] << 8) | (row[x * 4 + 2] << 16) | (uint32_t{row[x * 4 + 3]} << 24));
        out[x * 3] = red.Get(v);
        out[x * 3 + 1] = green.Get(v);
        out[x * 3 + 2] = blue.Get(v);
      }
    }
  }
  return img;
}

RgbImage DecodePnm(const uint8_t* data, size_t size) {
  const char kind = static_cast<char>(data[1]);
  size_t at = 2;
  auto read_number = [&]() -> int64_t {
    while (at < size) {
      if (data[at] == '#') {
        while (at < size && data[at] != '\n' && data[at] != '\r') ++at;
      } else if (std::isspace(data[at])) {
        ++at;
      } else {
        break;
      }
    }
    ONYX_CHECK(at < size && std::isdigit(data[at]), kRuntime, "PNM: bad header");
    int64_t v = 0;
    while (at < size && std::isdigit(data[at])) {
      v = v * 10 + (data[at++] - '0');
      ONYX_CHECK(v <= (int64_t{1} << 31), kRuntime, "PNM: number too large in the header");
    }
    return v;
  };
  const int64_t width = read_number(), height = read_number();
  const bool bitmap = kind == '1' || kind == '4';
  const int64_t maxval = bitmap ? 1 : read_number();
  ONYX_CHECK(maxval >= 1 && maxval <= 65535, kRuntime, "PNM: bad maximum value ", maxval);
  const bool color = kind == '3' || kind == '6';
  const bool ascii = kind <= '3';
  const int64_t channels = color ? 3 : 1;
  // Binary rasters must be all there before we allocate for them; ASCII ones need at least
  // one byte per sample.
  if (width > 0 && height > 0 && width * height <= kMaxPixels) {
    const int64_t need = bitmap && !ascii ? (width + 7) / 8 * height : width * height * channels;
    ONYX_CHECK(static_cast<int64_t>(size - at) >= need, kRuntime, "PNM: the data ends early");
  }
  RgbImage img = Allocate("PNM", width, height);
  const int64_t samples = width * height * channels;
  auto scale = [&](int64_t v) {
    ONYX_CHECK(v <= maxval, kRuntime, "PNM: sample ", v, " exceeds the maximum ", maxval);
    return static_cast<uint8_t>((v * 255 + maxval / 2) / maxval);
  };
  std::vector<uint8_t> values(static_cast<size_t>(samples));
  if (ascii) {
    for (int64_t i = 0; i < samples; ++i) {
      if (bitmap) {
        // Digits may be run together in P1.
        while (at < size && std::isspace(data[at])) ++at;
        ONYX_CHECK(at < size && (data[at] == '0' || data[at] == '1'), kRuntime, "PNM: bad bitmap data");
        values[i] = data[at++] == '1' ? 0 : 255;
      } else {
        values[i] = scale(read_number());
      }
    }
  } else {
    ONYX_CHECK(at < size && std::isspace(data[at]), kRuntime, "PNM: bad header");
    ++at;  // the single whitespace before the raster
    const Bytes b(data, size, "PNM", true);
    if (bitmap) {
      const int64_t stride = (width + 7) / 8;
      b.Need(at, static_cast<size_t>(stride * height));
      for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x)
          values[y * width + x] = (data[at + y * stride + x / 8] >> (7 - x % 8)) & 1 ? 0 : 255;
    } else {
      const int64_t bytes = maxval > 255 ? 2 : 1;
      b.Need(at, static_cast<size_t>(samples * bytes));
      for (int64_t i = 0; i < samples; ++i) values[i] = scale(bytes == 2 ? b.U16(at + i * 2) : data[at + i]);
    }
  }
  for (int64_t p = 0; p < width * height; ++p)
    for (int c = 0; c < 3; ++c) img.pixels[p * 3 + c] = values[p * channels + (color ? c : 0)];
  return img;
}

namespace {

void UnpackBits(const uint8_t* in, size_t n, std::vector<uint8_t>& out, size_t expected) {
  size_t i = 0;
  while (i < n && out.size() < expected) {
    const int8_t c = static_cast<int8_t>(in[i++]);
    if (c >= 0) {
      const size_t len = static_cast<size_t>(c) + 1;
      ONYX_CHECK(i + len <= n, kRuntime, "TIFF: PackBits data ends early");
      out.insert(out.end(), in + i, in + i + len);
      i += len;
    } else if (c != -128) {
      ONYX_CHECK(i < n, kRuntime, "TIFF: PackBits data ends early");
      out.insert(out.end(), static_cast<size_t>(1 - c), in[i++]);
    }
  }
}

// TIFF's LZW (MSB-first codes, early change).
void UnLzw(const uint8_t* in, size_t n, std::vector<uint8_t>& out, size_t expected) {
  std::vector<std::vector<uint8_t>> table;
  auto reset = [&] {
    table.assign(258, {});
    for (int k = 0; k < 256; ++k) table[k] = {static_cast<uint8_t>(k)};
  };
  reset();
  size_t bitpos = 0;
  int width = 9;
  int prev = -1;
  while (out.size() < expected) {
    if (bitpos + width > n * 8) break;
    uint32_t code = 0;
    for (int k = 0; k < width; ++k, ++bitpos) code = (code << 1) | ((in[bitpos / 8] >> (7 - bitpos % 8)) & 1);
    if (code == 257) break;
    if (code == 256) {
      reset();
      width = 9;
      prev = -1;
      continue;
    }
    std::vector<uint8_t> entry;
    if (code < table.size() && (code >= 258 || code < 256)) {
      entry = table[code];
      if (prev >= 0) {
        std::vector<uint8_t> added = table[prev];
        added.push_back(entry[0]);
        table.push_back(std::move(added));
      }
    } else {
      ONYX_CHECK(prev >= 0 && code == table.size(), kRuntime, "TIFF: bad LZW code ", code);
      entry = table[prev];
      entry.push_back(entry[0]);
      table.push_back(entry);
    }
    out.insert(out.end(), entry.begin(), entry.end());
    prev = static_cast<int>(code);
    if (table.size() + 1 >= (size_t{1} << width) && width < 12) ++width;
    ONYX_CHECK(table.size() <= 4096, kRuntime, "TIFF: LZW table overflow");
  }
}

}  // namespace

RgbImage DecodeTiff(const uint8_t* data, size_t size) {
  const Bytes b(data, size, "TIFF", data[0] == 'M');
  const uint32_t ifd = b.U32(4);
  const uint32_t entries = b.U16(ifd);
  uint32_t width = 0, height = 0, compression = 1, photometric = 1, spp = 1, rows_per_strip = 0, planar = 1,
           predictor = 1;
  std::vector<uint32_t> bits, offsets, counts, colormap;
  auto values = [&](size_t entry) {
    const uint32_t type = b.U16(entry + 2), count = b.U32(entry + 4);
    const size_t unit = type == 3 ? 2 : type == 4 ? 4 : type == 1 ? 1 : 0;
    ONYX_CHECK(unit != 0, kRuntime, "TIFF: unsupported field type ", type);
    ONYX_CHECK(count <= size, kRuntime, "TIFF: bad field count");
    const size_t at = unit * count <= 4 ? entry + 8 : b.U32(entry + 8);
    std::vector<uint32_t> v(count);
    for (uint32_t k = 0; k < count; ++k)
      v[k] = unit == 2 ? b.U16(at + 2 * k) : unit == 4 ? b.U32(at + 4 * k) : b.U8(at + k);
    return v;
  };
  for (uint32_t i = 0; i < entries; ++i) {
    const size_t entry = ifd + 2 + 12 * static_cast<size_t>(i);
    const uint32_t tag = b.U16(entry);
    auto first = [&] {
      const auto v = values(entry);
      ONYX_CHECK(!v.empty(), kRuntime, "TIFF: empty field ", tag);
      return v[0];
    };
    switch (tag) {
      case 256: width = first(); break;
      case 257: height = first(); break;
      case 258: bits = values(entry); break;
      case 259: compression = first(); break;
      case 262: photometric = first(); break;
      case 273: offsets = values(entry); break;
      case 277: spp = first(); break;
      case 278: rows_per_strip = first(); break;
      case 279: counts = values(entry); break;
      case 284: planar = first(); break;
      case 317: predictor = first(); break;
      case 320: colormap = values(entry); break;
      case 322: ONYX_THROW(kRuntime, "TIFF: tiled images are not supported");
      default: break;
    }
  }
  RgbImage img = Allocate("TIFF", width, height);
  if (bits.empty()) bits.assign(1, 1);
  for (uint32_t v : bits) ONYX_CHECK(v == bits[0], kRuntime, "TIFF: mixed bit depths are not supported");
  const uint32_t depth = bits[0];
  ONYX_CHECK(depth == 8 || (depth <= 4 && (photometric <= 1 || photometric == 3)), kRuntime,
             "TIFF: unsupported bit depth ", depth);
  ONYX_CHECK(planar == 1 || spp == 1, kRuntime, "TIFF: planar (non-interleaved) images are not supported");
  ONYX_CHECK(photometric <= 3, kRuntime, "TIFF: unsupported photometric interpretation ", photometric);
  ONYX_CHECK(photometric != 2 || spp >= 3, kRuntime, "TIFF: RGB needs 3 samples per pixel, has ", spp);
  ONYX_CHECK(compression == 1 || compression == 5 || compression == 32773, kRuntime, "TIFF: unsupported compression ",
             compression, " (supported: none, LZW, PackBits)");
  ONYX_CHECK(!offsets.empty() && offsets.size() == counts.size(), kRuntime, "TIFF: bad strip tables");
  if (rows_per_strip == 0 || rows_per_strip > height) rows_per_strip = height;
  const size_t row_bytes = (static_cast<size_t>(width) * spp * depth + 7) / 8;

  std::vector<uint8_t> raster;
  const size_t total = row_bytes * height;
  for (size_t s = 0; s < offsets.size() && raster.size() < total; ++s) {
    b.Need(offsets[s], counts[s]);
    const uint8_t* strip = data + offsets[s];
    const size_t expected = std::min(total - raster.size(), row_bytes * rows_per_strip);
    std::vector<uint8_t> decoded;
    if (compression == 1) decoded.assign(strip, strip + std::min<size_t>(counts[s], expected));
    else if (compression == 5) UnLzw(strip, counts[s], decoded, expected);
    else UnpackBits(strip, counts[s], decoded, expected);
    decoded.resize(expected, 0);
    raster.insert(raster.end(), decoded.begin(), decoded.end());
  }
  ONYX_CHECK(raster.size() == total, kRuntime, "TIFF: the strips hold ", raster.size(), " bytes; expected ", total);
  if (predictor == 2 && depth == 8) {
    for (uint32_t y = 0; y < height; ++y) {
      uint8_t* row = raster.data() + y * row_bytes;
      for (size_t x = spp; x < static_cast<size_t>(width) * spp; ++x)
        row[x] = static_cast<uint8_t>(row[x] + row[x - spp]);
    }
  }
  const uint32_t max = (1u << depth) - 1;
  for (uint32_t y = 0; y < height; ++y) {
    const uint8_t* row = raster.data() + y * row_bytes;
    for (uint32_t x = 0; x < width; ++x) {
      uint8_t* out = img.pixels.data() + (static_cast<size_t>(y) * width + x) * 3;
      if (photometric == 2) {
        std::memcpy(out, row + static_cast<size_t>(x) * spp, 3);
        continue;
      }
      const size_t bit = static_cast<size_t>(x) * spp * depth;
      const uint32_t v = depth == 8 ? row[bit / 8] : (row[bit / 8] >> (8 - depth - bit % 8)) & max;
      if (photometric == 3) {
        ONYX_CHECK(colormap.size() == 3 * (size_t{1} << depth), kRuntime, "TIFF: bad colour map");
        for (int c = 0; c < 3; ++c) out[c] = static_cast<uint8_t>(colormap[c * (max + 1) + v] >> 8);
      } else {
        const uint32_t g = v * 255 / max;
        std::memset(out, static_cast<int>(photometric == 0 ? 255 - g : g), 3);
      }
    }
  }
  return img;
}

}  // namespace onyx::image
