// This machine's measured peak, the yardstick for a profile's achieved GFLOP/s and GB/s: the
// best single-thread SGEMM rate of Onyx's own GEMM (its best ISA) times the thread count, and
// the best memcpy bandwidth of one thread (bytes read plus written).
#pragma once

#include <string>

namespace onyx::cli {

struct MachinePeak {
  double gflops = 0;       // for `threads` threads
  double gbytes_per_s = 0;
  int threads = 1;
  std::string gemm_kernel;  // e.g. "f32_gemm_avx512_14x32"
};

// Takes about a tenth of a second.
MachinePeak MeasureMachinePeak(int threads);

}  // namespace onyx::cli
