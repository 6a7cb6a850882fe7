// Minimal protocol-buffer wire-format reader over a byte range. Onyx decodes ONNX files with it
// directly (no generated classes), so tensor bytes can be viewed in place and models over 2 GB
// load. Every read is bounds-checked; malformed input throws Error(kInvalidProtobuf).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace onyx::proto {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

class WireReader {
 public:
  // `what` names the message being read, for error texts ("model.onnx: GraphProto").
  WireReader(const uint8_t* begin, const uint8_t* end, std::string what)
      : p_(begin), end_(end), begin_(begin), what_(std::move(what)) {}

  // Advances to the next field; false at the end of the message.
  bool Next();
  uint32_t field() const { return field_; }
  WireType wire_type() const { return wire_type_; }

  uint64_t ReadVarint();
  int64_t ReadInt64() { return static_cast<int64_t>(ReadVarint()); }
  int32_t ReadInt32() { return static_cast<int32_t>(ReadVarint()); }
  float ReadFloat();
  double ReadDouble();
  uint32_t ReadFixed32();
  uint64_t ReadFixed64();
  std::string_view ReadBytes();  // a view into the input
  std::string ReadString() { return std::string(ReadBytes()); }
  WireReader ReadMessage(const std::string& what);
  void Skip();

  // Repeated scalars, accepting both packed and unpacked encodings.
  void ReadRepeatedInt64(std::vector<int64_t>& out);
  void ReadRepeatedFloat(std::vector<float>& out);
  void ReadRepeatedDouble(std::vector<double>& out);
  void ReadRepeatedUInt64(std::vector<uint64_t>& out);

  bool AtEnd() const { return p_ >= end_; }
  [[noreturn]] void Fail(const std::string& message) const;
  const std::string& what() const { return what_; }

 private:
  void Need(uint64_t bytes) const;

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* begin_;
  std::string what_;
  uint32_t field_ = 0;
  WireType wire_type_ = WireType::kVarint;
};

}  // namespace onyx::proto
