#include "tensor/npy.h"

#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/check.h"
#include "base/utf8_encode.h"

namespace onyx {
namespace {

struct NpyType {
  const char* descr;
  DataType dtype;
};

constexpr NpyType kNpyTypes[] = {
    {"<f4", DataType::kFloat},  {"<f8", DataType::kDouble}, {"<f2", DataType::kFloat16}, {"|i1", DataType::kInt8},
    {"<i2", DataType::kInt16},  {"<i4", DataType::kInt32},  {"<i8", DataType::kInt64},   {"|u1", DataType::kUInt8},
    {"<u2", DataType::kUInt16}, {"<u4", DataType::kUInt32}, {"<u8", DataType::kUInt64},  {"|b1", DataType::kBool},
    {"<c8", DataType::kComplex64}, {"<c16", DataType::kComplex128},
};

std::string Utf32ToUtf8(const char32_t* s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n && s[i] != 0; ++i) utf8::Append(out, s[i]);
  return out;
}

std::u32string Utf8ToUtf32(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out += cp;
    i += len;
  }
  return out;
}

// Value of `key` in the header dict, as raw text up to the next top-level comma.
std::string HeaderField(const std::string& header, const std::string& key, const std::string& path) {
  const auto pos = header.find("'" + key + "'");
  ONYX_CHECK(pos != std::string::npos, kInvalidArgument, path, ": .npy header has no '", key, "'");
  size_t p = header.find(':', pos) + 1;
  while (p < header.size() && header[p] == ' ') ++p;
  if (header[p] == '(') return header.substr(p, header.find(')', p) - p + 1);
  size_t end = header.find_first_of(",}", p);
  return header.substr(p, end - p);
}

// A decimal count from the header (a dim, a string width): digits only, and within int64.
int64_t ParseCount(const std::string& digits, const std::string& path, const char* what) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  ONYX_CHECK(ec == std::errc() && end == digits.data() + digits.size(), kInvalidArgument, path, ": .npy ", what, " '",
             digits, "' is not a number Onyx can hold");
  return v;
}

}  // namespace

Tensor ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ONYX_CHECK(in.good(), kInvalidArgument, "cannot open '", path, "'");
  char magic[8];
  in.read(magic, 8);
  ONYX_CHECK(in.good() && std::memcmp(magic, "\x93NUMPY", 6) == 0, kInvalidArgument, path, ": not a .npy file");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t len16 = 0;
    in.read(reinterpret_cast<char*>(&len16), 2);
    header_len = len16;
  } else {
    in.read(reinterpret_cast<char*>(&header_len), 4);
  }
  ONYX_CHECK(in.good() && header_len < (1u << 20), kInvalidArgument, path, ": bad .npy header");
  std::string header(header_len, '\0');
  in.read(header.data(), header_len);
  ONYX_CHECK(in.gcount() == static_cast<std::streamsize>(header_len), kInvalidArgument, path, ": truncated .npy header");
  // What the file holds after the header bounds every size below, so a header cannot make the
  // reader allocate more than the file could fill.
  const std::streamoff data_at = in.tellg();
  in.seekg(0, std::ios::end);
  const int64_t data_bytes = static_cast<int64_t>(in.tellg() - data_at);
  in.seekg(data_at);
  std::string descr = HeaderField(header, "descr", path);
  ONYX_CHECK(descr.size() >= 2 && (descr[0] == '\'' || descr[0] == '"') && descr.back() == descr[0], kInvalidArgument,
             path, ": .npy descr ", descr, " is not a quoted string");
  descr = descr.substr(1, descr.size() - 2);  // strip quotes
  ONYX_CHECK(HeaderField(header, "fortran_order", path) == "False", kInvalidArgument, path,
             ": Fortran-order arrays are not supported");
  std::string shape_text = HeaderField(header, "shape", path);
  Shape shape;
  {
    std::string digits;
    for (char c : shape_text) {
      if (std::isdigit(static_cast<unsigned char>(c))) {
        digits += c;
      } else if (!digits.empty()) {
        shape.push_back(ParseCount(digits, path, "dim"));
        digits.clear();
      }
    }
  }
  const int64_t elements = ShapeSize(shape);
  // Bytes of `elements` items of `width` bytes, checked against what the file holds.
  auto check_bytes = [&](int64_t width) {
    int64_t bytes = 0;
    ONYX_CHECK(!__builtin_mul_overflow(elements, width, &bytes) && bytes <= data_bytes, kInvalidArgument, path,
               ": truncated data (shape ", ShapeToString(shape), " of '", descr, "' needs more than the ", data_bytes,
               " bytes after the header)");
  };
  if (descr.size() > 2 && descr[0] == '<' && descr[1] == 'U') {
    const size_t width = static_cast<size_t>(ParseCount(descr.substr(2), path, "string width"));
    if (elements == 0) return Tensor(DataType::kString, shape);  // no data to bound the width by
    // Zero-width strings hold no bytes, so the file size would not bound their count (NumPy never
    // writes them: an array of empty strings is '<U1').
    ONYX_CHECK(width >= 1 && width <= static_cast<size_t>(data_bytes), kInvalidArgument, path, ": string width ",
               width, " is not within 1 and the ", data_bytes, " bytes the file holds");
    check_bytes(static_cast<int64_t>(width) * 4);
    Tensor t(DataType::kString, shape);
    std::vector<char32_t> buf(width);
    for (int64_t i = 0; i < t.size(); ++i) {
      in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(width * 4));
      t.data<std::string>()[i] = Utf32ToUtf8(buf.data(), width);
    }
    ONYX_CHECK(in.good() || t.size() == 0, kInvalidArgument, path, ": truncated data");
    return t;
  }
  if (descr.size() > 2 && descr[0] == '|' && descr[1] == 'S') {
    const size_t width = static_cast<size_t>(ParseCount(descr.substr(2), path, "string width"));
    if (elements == 0) return Tensor(DataType::kString, shape);  // no data to bound the width by
    // Zero-width strings hold no bytes, so the file size would not bound their count (NumPy never
    // writes them: an array of empty strings is '<U1').
    ONYX_CHECK(width >= 1 && width <= static_cast<size_t>(data_bytes), kInvalidArgument, path, ": string width ",
               width, " is not within 1 and the ", data_bytes, " bytes the file holds");
    check_bytes(static_cast<int64_t>(width));
    Tensor t(DataType::kString, shape);
    std::string buf(width, '\0');
    for (int64_t i = 0; i < t.size(); ++i) {
      in.read(buf.data(), static_cast<std::streamsize>(width));
      t.data<std::string>()[i] = std::string(buf.c_str());
    }
    ONYX_CHECK(in.good() || t.size() == 0, kInvalidArgument, path, ": truncated data");
    return t;
  }
  if (descr == "<b1" || descr == "?") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  for (const auto& nt : kNpyTypes) {
    if (descr != nt.descr) continue;
    check_bytes(StorageBytes(nt.dtype, 1));
    Tensor t(nt.dtype, shape);
    in.read(static_cast<char*>(t.raw_data()), static_cast<std::streamsize>(t.byte_size()));
    ONYX_CHECK(in.gcount() == t.byte_size(), kInvalidArgument, path, ": truncated data (", in.gcount(), " of ",
               t.byte_size(), " bytes)");
    return t;
  }
  ONYX_THROW(kInvalidArgument, path, ": .npy element type '", descr, "' is not supported");
}

void WriteNpy(const std::string& path, const Tensor& tensor) {
  Tensor t = tensor;
  std::string descr;
  switch (t.dtype()) {
    case DataType::kBFloat16: descr = "<u2"; break;
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: descr = "|u1"; break;
    case DataType::kInt4:
    case DataType::kUInt4:
    case DataType::kInt2:
    case DataType::kUInt2:
    case DataType::kFloat4E2M1: {
      // Unpack to one byte per element (sign-extended for the signed types).
      const int bits = DataTypeBits(t.dtype());
      const bool is_signed = t.dtype() == DataType::kInt4 || t.dtype() == DataType::kInt2;
      Tensor wide(is_signed ? DataType::kInt8 : DataType::kUInt8, t.shape());
      const auto* src = t.data<uint8_t>();
      const int per_byte = 8 / bits;
      for (int64_t i = 0; i < t.size(); ++i) {
        int v = (src[i / per_byte] >> ((i % per_byte) * bits)) & ((1 << bits) - 1);
        if (is_signed && (v >> (bits - 1))) v -= 1 << bits;
        wide.data<uint8_t>()[i] = static_cast<uint8_t>(v);
      }
      descr = is_signed ? "|i1" : "|u1";
      t = wide;
      break;
    }
    default:
      for (const auto& nt : kNpyTypes)
        if (nt.dtype == t.dtype()) descr = nt.descr;
  }
  size_t str_width = 1;
  std::vector<std::u32string> wide_strings;
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.size(); ++i) {
      wide_strings.push_back(Utf8ToUtf32(t.data<std::string>()[i]));
      str_width = std::max(str_width, wide_strings.back().size());
    }
    descr = "<U" + std::to_string(str_width);
  }
  ONYX_CHECK(!descr.empty(), kInvalidArgument, "cannot write ", t.Describe(), " as .npy");
  std::ostringstream shape;
  shape << "(";
  for (size_t i = 0; i < t.rank(); ++i) shape << t.dim(i) << (t.rank() == 1 ? "," : (i + 1 < t.rank() ? ", " : ""));
  shape << ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape.str() + ", }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  ONYX_CHECK(out.good(), kInvalidArgument, "cannot write '", path, "'");
  out.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (t.dtype() == DataType::kString) {
    for (auto& s : wide_strings) {
      s.resize(str_width, U'\0');
      out.write(reinterpret_cast<const char*>(s.data()), static_cast<std::streamsize>(str_width * 4));
    }
  } else {
    out.write(static_cast<const char*>(t.raw_data()), static_cast<std::streamsize>(t.byte_size()));
  }
  ONYX_CHECK(out.good(), kInvalidArgument, "writing '", path, "' failed");
}

}  // namespace onyx
