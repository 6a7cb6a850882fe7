// The one exception type Onyx throws. Messages name what they are about: the model, node, op
// type and opset, dtypes and shapes (see DESIGN.md, house rules).
#pragma once

#include <stdexcept>
#include <string>

namespace onyx {

enum class ErrorCode {
  kFail,
  kInvalidArgument,   // a caller's feed, option or name is wrong
  kInvalidModel,      // the model file or graph is malformed
  kNotImplemented,    // a valid model needs something Onyx does not have (op, dtype)
  kRuntime,           // a kernel failed on valid input (e.g. shape mismatch found at run time)
  kOutOfMemory,       // an allocation or an arena cap failed
  kNoSuchFile,        // a model or data file does not exist
  kInvalidProtobuf,   // the model's bytes are not a valid ONNX protobuf
};

class Error : public std::runtime_error {
 public:
  // The message quotes names from models, which may hold any bytes: it is stored as valid
  // UTF-8 on one line (invalid bytes and control characters become \xNN).
  Error(ErrorCode code, const std::string& message) : std::runtime_error(EscapedMessage(message)), code_(code) {}
  static std::string EscapedMessage(const std::string& text);
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace onyx
