#include "base/logging.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "base/check.h"

namespace onyx {

Logger::Logger(std::string logid, int min_severity, int max_verbosity, const char* what)
    : logid_(std::move(logid)), min_severity_(min_severity), max_verbosity_(max_verbosity) {
  ONYX_CHECK(min_severity >= 0 && min_severity <= 4, kInvalidArgument, what,
             ": log_severity_level must be 0 (verbose) to 4 (fatal), got ", min_severity);
  ONYX_CHECK(max_verbosity >= 0, kInvalidArgument, what, ": log_verbosity_level must be 0 or more, got ",
             max_verbosity);
}

void Logger::Write(LogSeverity severity, const std::string& message) const {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  static constexpr char kLetters[] = {'V', 'I', 'W', 'E', 'F'};
  const std::string line = StrCat(stamp, ".", millis / 100, (millis / 10) % 10, millis % 10, " [",
                                  kLetters[static_cast<int>(severity)], ":onyx:", logid_, "] ", message, "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);  // stderr is unbuffered: one write(2)
}

}  // namespace onyx
