// Peak FMA throughput of one core per ISA: a tight loop of independent multiply-adds, the
// yardstick SGEMM's GFLOP/s is compared against.
#pragma once

#include <cstdint>
#include <string>

namespace onyx::bench {

// Runs `iterations` rounds of the ISA's FMA loop; returns the flops it did (0 for an unknown ISA).
double RunFmaLoopAvx512(int64_t iterations);
double RunFmaLoopAvx2(int64_t iterations);

// Best-of-several GFLOP/s of the loop above for "avx512" or "avx2" on the calling thread; 0 when
// the ISA has no probe.
double MeasureFmaPeakGflops(const std::string& isa);

}  // namespace onyx::bench
