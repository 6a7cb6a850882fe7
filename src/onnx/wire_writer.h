// Protocol-buffer wire-format writer, the counterpart of WireReader. Nested messages are
// written by building them in their own WireWriter and appending the bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace onyx::proto {

class WireWriter {
 public:
  void Varint(uint32_t field, uint64_t value);
  void Int64(uint32_t field, int64_t value) { Varint(field, static_cast<uint64_t>(value)); }
  void Float(uint32_t field, float value);
  void Bytes(uint32_t field, std::string_view bytes);
  void Message(uint32_t field, const WireWriter& message) { Bytes(field, message.data()); }
  void PackedInt64(uint32_t field, const std::vector<int64_t>& values);
  void PackedFloat(uint32_t field, const std::vector<float>& values);

  const std::string& data() const { return out_; }
  std::string Take() { return std::move(out_); }
  size_t size() const { return out_.size(); }

 private:
  void Key(uint32_t field, uint32_t wire_type) { RawVarint((static_cast<uint64_t>(field) << 3) | wire_type); }
  void RawVarint(uint64_t v);
  std::string out_;
};

}  // namespace onyx::proto
