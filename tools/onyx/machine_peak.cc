#include "machine_peak.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "linalg/gemm.h"
#include "platform/timer.h"

namespace onyx::cli {

MachinePeak MeasureMachinePeak(int threads) {
  MachinePeak peak;
  peak.threads = std::max(1, threads);
  peak.gemm_kernel = linalg::SgemmKernelName();
  // A GEMM large enough to run at the kernel's full rate, small enough to stay in cache: the
  // best of a few runs on the calling thread.
  constexpr int64_t kDim = 256;
  std::vector<float> a(kDim * kDim, 0.5f), b(kDim * kDim, 0.25f), c(kDim * kDim);
  double best_gflops = 0;
  for (int i = 0; i < 8; ++i) {
    const int64_t t0 = NowNanos();
    linalg::Sgemm(false, false, kDim, kDim, kDim, 1.0f, a.data(), kDim, b.data(), kDim, 0.0f, c.data(), kDim, nullptr);
    const double s = static_cast<double>(NowNanos() - t0) / 1e9;
    if (s > 0) best_gflops = std::max(best_gflops, 2.0 * kDim * kDim * kDim / s / 1e9);
  }
  peak.gflops = best_gflops * peak.threads;
  // Bandwidth: a copy well beyond the last-level cache.
  constexpr size_t kBytes = size_t{64} << 20;
  std::vector<char> from(kBytes, 1), to(kBytes, 0);
  double best_gbs = 0;
  for (int i = 0; i < 3; ++i) {
    const int64_t t0 = NowNanos();
    std::memcpy(to.data(), from.data(), kBytes);
    const double s = static_cast<double>(NowNanos() - t0) / 1e9;
    if (s > 0) best_gbs = std::max(best_gbs, 2.0 * kBytes / s / 1e9);
  }
  peak.gbytes_per_s = best_gbs;
  return peak;
}

}  // namespace onyx::cli
