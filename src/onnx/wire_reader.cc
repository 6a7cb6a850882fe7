#include "onnx/wire_reader.h"

#include <cstring>

#include "base/check.h"

namespace onyx::proto {

void WireReader::Fail(const std::string& message) const {
  ONYX_THROW(kInvalidProtobuf, what_, ": ", message, " at byte ", p_ - begin_, " (file truncated or not an ONNX model?)");
}

void WireReader::Need(uint64_t bytes) const {
  if (bytes > static_cast<uint64_t>(end_ - p_)) Fail("field runs past the end of the message");
}

bool WireReader::Next() {
  if (p_ >= end_) return false;
  const uint64_t key = ReadVarint();
  field_ = static_cast<uint32_t>(key >> 3);
  const uint64_t wt = key & 7u;
  if (field_ == 0 || wt > 5 || wt == 3 || wt == 4) Fail("invalid field key " + std::to_string(key));
  wire_type_ = static_cast<WireType>(wt);
  return true;
}

uint64_t WireReader::ReadVarint() {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p_ >= end_) Fail("varint runs past the end");
    const uint8_t b = *p_++;
    result |= static_cast<uint64_t>(b & 0x7Fu) << shift;
    if ((b & 0x80u) == 0) return result;
  }
  Fail("varint longer than 10 bytes");
}

uint32_t WireReader::ReadFixed32() {
  Need(4);
  uint32_t v;
  std::memcpy(&v, p_, 4);
  p_ += 4;
  return v;
}

uint64_t WireReader::ReadFixed64() {
  Need(8);
  uint64_t v;
  std::memcpy(&v, p_, 8);
  p_ += 8;
  return v;
}

float WireReader::ReadFloat() {
  const uint32_t bits = ReadFixed32();
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double WireReader::ReadDouble() {
  const uint64_t bits = ReadFixed64();
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

std::string_view WireReader::ReadBytes() {
  if (wire_type_ != WireType::kLengthDelimited) Fail("expected a length-delimited field " + std::to_string(field_));
  const uint64_t len = ReadVarint();
  Need(len);
  std::string_view v(reinterpret_cast<const char*>(p_), static_cast<size_t>(len));
  p_ += len;
  return v;
}

WireReader WireReader::ReadMessage(const std::string& what) {
  std::string_view bytes = ReadBytes();
  const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
  return WireReader(b, b + bytes.size(), what);
}

void WireReader::Skip() {
  switch (wire_type_) {
    case WireType::kVarint: ReadVarint(); break;
    case WireType::kFixed64: Need(8); p_ += 8; break;
    case WireType::kFixed32: Need(4); p_ += 4; break;
    case WireType::kLengthDelimited: ReadBytes(); break;
    default: Fail("unsupported wire type");
  }
}

namespace {

template <typename T, typename ReadOne>
void ReadRepeated(WireReader& r, std::vector<T>& out, WireType scalar_type, ReadOne read_one) {
  if (r.wire_type() != WireType::kLengthDelimited) {
    if (r.wire_type() != scalar_type) r.Fail("unexpected wire type for a repeated field");
    out.push_back(read_one(r));
    return;
  }
  WireReader packed = r.ReadMessage(r.what());
  // Packed: consecutive scalars without keys.
  while (!packed.AtEnd()) out.push_back(read_one(packed));
}

}  // namespace

void WireReader::ReadRepeatedInt64(std::vector<int64_t>& out) {
  ReadRepeated(*this, out, WireType::kVarint, [](WireReader& r) { return r.ReadInt64(); });
}

void WireReader::ReadRepeatedUInt64(std::vector<uint64_t>& out) {
  ReadRepeated(*this, out, WireType::kVarint, [](WireReader& r) { return r.ReadVarint(); });
}

void WireReader::ReadRepeatedFloat(std::vector<float>& out) {
  ReadRepeated(*this, out, WireType::kFixed32, [](WireReader& r) { return r.ReadFloat(); });
}

void WireReader::ReadRepeatedDouble(std::vector<double>& out) {
  ReadRepeated(*this, out, WireType::kFixed64, [](WireReader& r) { return r.ReadDouble(); });
}

}  // namespace onyx::proto
