// Malformed .npy headers (the .npy fuzz harness's finds, tests/fuzz/npy_fuzzer.cc): each is an
// onyx::Error naming the file, never another exception, and a header cannot make the reader
// allocate more than the file could fill.
#include <gtest/gtest.h>

#include <string>

#include "onyx/error.h"
#include "scratch_file.h"
#include "tensor/npy.h"

namespace onyx {
namespace {

// The bytes of a version 1.0 .npy file with this header dict (unpadded: the reader does not need
// padding).
std::string NpyBytes(const std::string& dict, const std::string& data) {
  std::string file = "\x93NUMPY";
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(dict.size() & 0xFF);
  file += static_cast<char>(dict.size() >> 8);
  return file + dict + data;
}

// What the reader makes of that file, read from a scratch file removed afterwards.
Tensor ReadNpyOf(const std::string& name, const std::string& dict, const std::string& data) {
  const ScratchFile file("npy_malformed_" + name + ".npy", NpyBytes(dict, data));
  return ReadNpy(file.path());
}

// The reader's error, or "" when it read the file.
std::string ErrorOf(const std::string& name, const std::string& dict, const std::string& data) {
  try {
    ReadNpyOf(name, dict, data);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NpyMalformed, DescrThatIsNotAQuotedString) {
  // An empty descr used to throw std::out_of_range from substr.
  for (const char* dict : {"{'descr':, 'fortran_order': False, 'shape': (1,), }",
                           "{'descr': <, 'fortran_order': False, 'shape': (1,), }",
                           "{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }"}) {
    const std::string error = ErrorOf("descr", dict, "abcd");
    EXPECT_NE(error.find("is not a quoted string"), std::string::npos) << dict << ": " << error;
  }
}

TEST(NpyMalformed, DimsAndWidthsBeyondInt64) {
  // std::stoll / std::stoul used to throw std::out_of_range and std::invalid_argument.
  EXPECT_NE(ErrorOf("dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", "abcd")
                .find("not a number"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("width", "{'descr': '<U99999999999999999999999', 'fortran_order': False, 'shape': (1,), }", "abcd")
          .find("not a number"),
      std::string::npos);
  EXPECT_NE(ErrorOf("nowidth", "{'descr': '<Ux', 'fortran_order': False, 'shape': (1,), }", "abcd").find("not a number"),
            std::string::npos);
}

TEST(NpyMalformed, ShapesLargerThanTheFileAreRefusedBeforeAllocating) {
  // 2^40 floats (4 TiB) or 2^40 strings from a file of 8 data bytes: refused from the file size.
  for (const char* descr : {"'<f4'", "'<U1'", "'|S2'"}) {
    const std::string dict = std::string("{'descr': ") + descr + ", 'fortran_order': False, 'shape': (1099511627776,), }";
    const std::string error = ErrorOf("huge", dict, "abcdefgh");
    EXPECT_NE(error.find("truncated data"), std::string::npos) << descr << ": " << error;
  }
  // Zero-width strings would need no bytes at all: 2^40 of them from an empty file.
  for (const char* descr : {"'<U0'", "'|S0'"}) {
    const std::string dict = std::string("{'descr': ") + descr + ", 'fortran_order': False, 'shape': (1099511627776,), }";
    const std::string error = ErrorOf("zero_width", dict, "");
    EXPECT_NE(error.find("string width 0 is not within 1"), std::string::npos) << descr << ": " << error;
  }
  // The same header with the data it asks for reads.
  const Tensor t = ReadNpyOf("fits", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "abcdefgh");
  EXPECT_EQ(t.size(), 2);
  const Tensor s = ReadNpyOf("fits_s", "{'descr': '|S2', 'fortran_order': False, 'shape': (2,), }", "abcd");
  ASSERT_EQ(s.size(), 2);
  EXPECT_EQ(s.data<std::string>()[1], "cd");
}

TEST(NpyMalformed, EmptyStringArraysReadWhateverTheirWidth) {
  // NumPy writes an empty array of strings with the width of its dtype and no data bytes.
  for (const char* descr : {"'<U4'", "'|S3'", "'<U0'"}) {
    const std::string dict = std::string("{'descr': ") + descr + ", 'fortran_order': False, 'shape': (2, 0, 4), }";
    const Tensor t = ReadNpyOf("empty_strings", dict, "");
    EXPECT_EQ(t.dtype(), DataType::kString) << descr;
    EXPECT_EQ(t.shape(), (Shape{2, 0, 4})) << descr;
  }
}

}  // namespace
}  // namespace onyx
