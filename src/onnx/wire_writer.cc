#include "onnx/wire_writer.h"

#include <cstring>

namespace onyx::proto {

void WireWriter::RawVarint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void WireWriter::Varint(uint32_t field, uint64_t value) {
  Key(field, 0);
  RawVarint(value);
}

void WireWriter::Float(uint32_t field, float value) {
  Key(field, 5);
  char buf[4];
  std::memcpy(buf, &value, 4);
  out_.append(buf, 4);
}

void WireWriter::Bytes(uint32_t field, std::string_view bytes) {
  Key(field, 2);
  RawVarint(bytes.size());
  out_.append(bytes.data(), bytes.size());
}

void WireWriter::PackedInt64(uint32_t field, const std::vector<int64_t>& values) {
  if (values.empty()) return;
  WireWriter packed;
  for (int64_t v : values) packed.RawVarint(static_cast<uint64_t>(v));
  Bytes(field, packed.data());
}

void WireWriter::PackedFloat(uint32_t field, const std::vector<float>& values) {
  if (values.empty()) return;
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  Bytes(field, bytes);
}

}  // namespace onyx::proto
