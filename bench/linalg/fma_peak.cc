#include "linalg/fma_peak.h"

#include <time.h>

#include <algorithm>

namespace onyx::bench {
namespace {

// CPU time, not wall time: other processes sharing the core do not count against the loop.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

double MeasureFmaPeakGflops(const std::string& isa) {
  double (*loop)(int64_t) = isa == "avx512" ? &RunFmaLoopAvx512 : isa == "avx2" ? &RunFmaLoopAvx2 : nullptr;
  if (loop == nullptr) return 0.0;
  // Best of several runs of a few ms: the least disturbed (caches, frequency) wins.
  double best = 0.0;
  for (int run = 0; run < 15; ++run) {
    const double start = ThreadCpuSeconds();
    const double flops = loop(int64_t{2} << 20);
    const double seconds = ThreadCpuSeconds() - start;
    best = std::max(best, flops / seconds * 1e-9);
  }
  return best;
}

}  // namespace onyx::bench
