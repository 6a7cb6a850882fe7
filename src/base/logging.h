// A small logger with ONNX Runtime's severities (0 verbose, 1 info, 2 warning, 3 error,
// 4 fatal). A session and each Run hold one, set from their options: messages at or above the
// minimum severity go to stderr, one line each, prefixed with the time, the severity and the log
// id; verbose messages also carry a verbosity and print only up to the logger's.
#pragma once

#include <string>

#include "base/str_cat.h"

namespace onyx {

enum class LogSeverity { kVerbose = 0, kInfo = 1, kWarning = 2, kError = 3, kFatal = 4 };

class Logger {
 public:
  Logger() = default;  // warnings and worse, no id
  // Throws Error(kInvalidArgument) naming `what` (e.g. "SessionOptions") when min_severity is not
  // 0..4 or max_verbosity is negative.
  Logger(std::string logid, int min_severity, int max_verbosity, const char* what = "logger");

  bool Enabled(LogSeverity severity, int verbosity = 0) const {
    return static_cast<int>(severity) >= min_severity_ && (severity != LogSeverity::kVerbose || verbosity <= max_verbosity_);
  }
  // Writes the message when Enabled(severity, verbosity); the pieces are only formatted then.
  template <typename... Args>
  void Log(LogSeverity severity, int verbosity, const Args&... pieces) const {
    if (Enabled(severity, verbosity)) Write(severity, StrCat(pieces...));
  }
  template <typename... Args>
  void Verbose(int verbosity, const Args&... pieces) const { Log(LogSeverity::kVerbose, verbosity, pieces...); }
  template <typename... Args>
  void Info(const Args&... pieces) const { Log(LogSeverity::kInfo, 0, pieces...); }
  template <typename... Args>
  void Warning(const Args&... pieces) const { Log(LogSeverity::kWarning, 0, pieces...); }

  const std::string& logid() const { return logid_; }

 private:
  // "2026-11-27 20:44:59.789 [W:onyx:<logid>] message": one write, so lines from concurrent
  // Runs do not interleave.
  void Write(LogSeverity severity, const std::string& message) const;

  std::string logid_;
  int min_severity_ = static_cast<int>(LogSeverity::kWarning);
  int max_verbosity_ = 0;
};

}  // namespace onyx
