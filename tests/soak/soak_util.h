// Helpers for the soak tests: their size from the environment (small in CI, full size when a
// run is reported: docs/memory.md), the real models of ../shared, seeded inputs, bit-exact
// comparison of outputs, and the process's memory (resident now, and at its peak).
#pragma once

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "onyx/session.h"

#if defined(__SANITIZE_ADDRESS__)
#define ONYX_SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ONYX_SOAK_ASAN 1
#endif
#endif
#ifndef ONYX_SOAK_ASAN
#define ONYX_SOAK_ASAN 0
#endif

namespace onyx::soak {

// A positive integer from the environment, or `fallback` when unset.
inline int64_t EnvInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (*end != '\0' || v < 1) {
    ADD_FAILURE() << name << "='" << text << "' is not an integer >= 1; using " << fallback;
    return fallback;
  }
  return v;
}

// Runs per thread of the concurrent soak and of the random-shape memory test
// (ONYX_SOAK_RUNS; full size 1000).
inline int64_t SoakRuns(int64_t ci_default) { return EnvInt("ONYX_SOAK_RUNS", ci_default); }
// Threads of the concurrent soak (ONYX_SOAK_THREADS; 8).
inline int SoakThreads() { return static_cast<int>(EnvInt("ONYX_SOAK_THREADS", 8)); }
// Runs of the leak test (ONYX_SOAK_LEAK_RUNS; full size 10000).
inline int64_t LeakRuns(int64_t ci_default) { return EnvInt("ONYX_SOAK_LEAK_RUNS", ci_default); }

// ../shared/models/real/<file>, or "" (the caller skips, saying so) when ../shared is absent.
inline std::string RealModel(const std::string& file) {
  const char* env = std::getenv("ONYX_SHARED_DIR");
  const std::string shared = env != nullptr && *env != '\0' ? env : ONYX_SHARED_DIR;
  const std::string path = shared + "/models/real/" + file;
  return std::ifstream(path).good() ? path : "";
}

// Seeded values for an input: floats uniform in [-1, 1], integers in [0, 10).
inline Tensor RandomTensor(DataType dtype, const Shape& shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    if (dtype == DataType::kFloat) {
      t.data<float>()[i] = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
    } else if (dtype == DataType::kInt64) {
      t.data<int64_t>()[i] = static_cast<int64_t>(rng() % 10);
    } else {
      ADD_FAILURE() << "RandomTensor: no filler for " << DataTypeName(dtype);
      return t;
    }
  }
  return t;
}

inline Tensor ScalarInt64(int64_t v) {
  Tensor t(DataType::kInt64, {});
  *t.data<int64_t>() = v;
  return t;
}

// Whether two Runs' outputs are the same, bit for bit (NaNs included); `why` says where not.
inline bool BitEqual(const std::vector<Value>& a, const std::vector<Value>& b, std::string* why) {
  if (a.size() != b.size()) {
    *why = "output counts differ";
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_tensor() || !b[i].is_tensor()) {
      *why = "output " + std::to_string(i) + " is not a tensor";
      return false;
    }
    const Tensor &x = a[i].tensor(), &y = b[i].tensor();
    if (x.dtype() != y.dtype() || x.shape() != y.shape()) {
      *why = "output " + std::to_string(i) + ": " + x.Describe() + " vs " + y.Describe();
      return false;
    }
    if (x.byte_size() > 0 && std::memcmp(x.raw_data(), y.raw_data(), static_cast<size_t>(x.byte_size())) != 0) {
      *why = "output " + std::to_string(i) + " " + x.Describe() + ": the bytes differ";
      return false;
    }
  }
  return true;
}

// Resident memory now, from /proc/self/statm.
inline int64_t CurrentRssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// The process's peak resident memory so far (getrusage's ru_maxrss).
inline int64_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

// Lowers the process's peak resident memory (VmHWM) to what is resident now (Linux >= 4.0:
// "5" to /proc/self/clear_refs); false where that is not allowed.
inline bool ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  return clear.good();
}

// VmHWM from /proc/self/status: the peak resident memory since the start or the last
// ResetPeakRss().
inline int64_t PeakRssSinceResetBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return PeakRssBytes();
}

inline double Mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace onyx::soak
