// .npy reading and writing, checked against files laid out by hand from NumPy's format
// description (magic, version, header length, dict, then C-order data), so the reader is not
// only checked against the writer.
#include "tensor/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "onyx/error.h"

namespace onyx {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "npy_test_" + std::to_string(getpid()) + "_" + name + ".npy";
}

// A version 1.0 .npy file: the header dict padded with spaces to a 64-byte boundary.
std::string NpyFile(const std::string& dict, const std::string& data) {
  std::string header = dict;
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string file = "\x93NUMPY";
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(header.size() & 0xFF);
  file += static_cast<char>(header.size() >> 8);
  return file + header + data;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Code points as NumPy stores '<U' text: 4 bytes each, little-endian, zero-padded to the width.
std::string Utf32Le(const std::u32string& text, size_t width) {
  std::string out;
  for (size_t i = 0; i < width; ++i) {
    const char32_t c = i < text.size() ? text[i] : 0;
    for (int b = 0; b < 4; ++b) out += static_cast<char>((c >> (8 * b)) & 0xFF);
  }
  return out;
}

TEST(Npy, ReadsUnicodeStringsAsUtf8) {
  // One, two, three and four UTF-8 bytes per code point: 'a', 'é' U+00E9, '€' U+20AC, U+1F600.
  const std::u32string words[] = {U"a", U"\u00e9t\u00e9", U"\u20ac5", U"\U0001F600!"};
  std::string data;
  for (const auto& w : words) data += Utf32Le(w, 3);
  const std::string path = TempPath("unicode");
  WriteBytes(path, NpyFile("{'descr': '<U3', 'fortran_order': False, 'shape': (2, 2), }", data));
  const Tensor t = ReadNpy(path);
  ASSERT_EQ(t.dtype(), DataType::kString);
  ASSERT_EQ(t.shape(), (Shape{2, 2}));
  EXPECT_EQ(t.data<std::string>()[0], "a");
  EXPECT_EQ(t.data<std::string>()[1], "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(t.data<std::string>()[2], "\xE2\x82\xAC" "5");
  EXPECT_EQ(t.data<std::string>()[3], "\xF0\x9F\x98\x80!");

  // Written back, the bytes are NumPy's again: the widest entry sets the width.
  const std::string out = TempPath("unicode_out");
  WriteNpy(out, t);
  const std::string bytes = ReadBytes(out);
  EXPECT_NE(bytes.find("'descr': '<U3'"), std::string::npos) << bytes.substr(0, 128);
  ASSERT_GE(bytes.size(), data.size());
  EXPECT_EQ(bytes.substr(bytes.size() - data.size()), data);
  std::remove(path.c_str());
  std::remove(out.c_str());
}

TEST(Npy, FloatsRoundTripAndTruncationIsAnError) {
  const Tensor t = Tensor::FromVector<float>(DataType::kFloat, {2, 3}, {1.5f, -2.0f, 0.0f, 3.25f, 1e-30f, 7.0f});
  const std::string path = TempPath("floats");
  WriteNpy(path, t);
  const Tensor back = ReadNpy(path);
  ASSERT_EQ(back.dtype(), DataType::kFloat);
  ASSERT_EQ(back.shape(), t.shape());
  for (int64_t i = 0; i < t.size(); ++i) EXPECT_EQ(back.data<float>()[i], t.data<float>()[i]) << i;

  // The same file cut short names the file instead of reading past its end.
  const std::string bytes = ReadBytes(path);
  WriteBytes(path, bytes.substr(0, bytes.size() - 5));
  try {
    ReadNpy(path);
    FAIL() << "a truncated .npy was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace onyx
