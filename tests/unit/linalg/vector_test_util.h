// Helpers shared by the vector-math tests: buffers that end at an inaccessible page (a read or
// write past the end crashes), ISA forcing, and ulp distances.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "guarded_floats.h"
#include "linalg/vector_math.h"

namespace onyx::linalg::testing {


// Forces one ISA for the scope, restoring the default afterwards.
class VectorIsaGuard {
 public:
  explicit VectorIsaGuard(const std::string& isa) : ok_(ForceVectorIsa(isa)) {}
  ~VectorIsaGuard() { ForceVectorIsa("auto"); }
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

// The spacing of floats at |v| (2^-149 for denormals and zero).
inline double UlpOf(double v) {
  v = std::fabs(v);
  if (v < static_cast<double>(std::numeric_limits<float>::min())) return std::ldexp(1.0, -149);
  int e;
  std::frexp(v, &e);  // v = f * 2^e, f in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

inline float BitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace onyx::linalg::testing
