// Shared pieces of the convolution engine tests: random problems, the plain reference
// (linalg::ConvReference) as the oracle, NCHWc round trips, and an ISA loop.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "linalg/conv.h"
#include "platform/thread_pool.h"

namespace onyx::linalg::testing {

inline std::vector<float> RandomVector(size_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline std::string Describe(const Conv2dShape& s) {
  std::ostringstream o;
  o << "N" << s.batch << " C" << s.in_channels << " " << s.in_h << "x" << s.in_w << " M" << s.out_channels << " g"
    << s.group << " k" << s.kernel_h << "x" << s.kernel_w << " s" << s.stride_h << "," << s.stride_w << " d"
    << s.dilation_h << "," << s.dilation_w << " p" << s.pad_top << "," << s.pad_left << "," << s.pad_bottom << ","
    << s.pad_right << " -> " << s.out_h << "x" << s.out_w;
  return o.str();
}

// Runs every supported ISA with `fn` (ForceConvIsa around it).
template <typename Fn>
void ForEachIsa(Fn&& fn) {
  for (const std::string& isa : SupportedConvIsas()) {
    SCOPED_TRACE("isa " + isa);
    ASSERT_TRUE(ForceConvIsa(isa));
    fn(isa);
  }
  ForceConvIsa("auto");
}

inline void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, float tol,
                        const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float scale = 0.0f;
  for (float v : want) scale = std::max(scale, std::fabs(v));
  int shown = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const float err = std::fabs(got[i] - want[i]);
    if (!(err <= tol * (1.0f + std::fabs(want[i])) + tol * 0.1f * scale)) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
      if (++shown >= 5) return;
    }
  }
}

// Runs `engine` on s in the given layouts (reordering x, the residual and y through NCHWc when
// asked) and returns y in NCHW.
template <typename Engine>
std::vector<float> RunEngine(const Engine& engine, const Conv2dShape& s, const std::vector<float>& x,
                             const float* bias, const std::vector<float>* residual, const ConvActivation& act,
                             bool blocked, ThreadPool* pool) {
  ConvRunArgs args;
  args.bias = bias;
  args.activation = act;
  const int64_t out_size = s.batch * s.out_channels * s.out_h * s.out_w;
  if (!blocked) {
    args.residual = residual != nullptr ? residual->data() : nullptr;
    std::vector<float> y(static_cast<size_t>(out_size), std::nanf(""));
    EXPECT_TRUE(engine.Supports(s, args));
    engine.Run(s, x.data(), y.data(), args, pool);
    return y;
  }
  int b = 0;
  if constexpr (requires { engine.block(); }) b = engine.block();
  EXPECT_GT(b, 0) << "NCHWc asked of an engine without a channel block";
  if (b <= 0) return {};
  const int64_t cb = (s.in_channels + b - 1) / b, mb = (s.out_channels + b - 1) / b;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  std::vector<float> xb(static_cast<size_t>(s.batch * cb * b * in_plane));
  ReorderToNchwc(x.data(), s.batch, s.in_channels, in_plane, b, xb.data(), pool);
  std::vector<float> rb;
  if (residual != nullptr) {
    rb.resize(static_cast<size_t>(s.batch * mb * b * out_plane));
    ReorderToNchwc(residual->data(), s.batch, s.out_channels, out_plane, b, rb.data(), pool);
    args.residual = rb.data();
  }
  args.x_layout = ConvLayout::kNchwc;
  args.y_layout = ConvLayout::kNchwc;
  std::vector<float> yb(static_cast<size_t>(s.batch * mb * b * out_plane), std::nanf(""));
  EXPECT_TRUE(engine.Supports(s, args));
  engine.Run(s, xb.data(), yb.data(), args, pool);
  std::vector<float> y(static_cast<size_t>(out_size));
  ReorderFromNchwc(yb.data(), s.batch, s.out_channels, out_plane, b, y.data(), pool);
  return y;
}

// One random problem on `engine_factory(s, w)` against the reference.
template <typename Factory>
void CheckProblem(const Conv2dShape& s, Factory&& engine_factory, std::mt19937& rng, bool with_bias,
                  bool with_residual, const ConvActivation& act, bool blocked, ThreadPool* pool, float tol) {
  const int64_t cg = s.in_channels / s.group;
  const std::vector<float> x = RandomVector(static_cast<size_t>(s.batch * s.in_channels * s.in_h * s.in_w), rng);
  const std::vector<float> w =
      RandomVector(static_cast<size_t>(s.out_channels * cg * s.kernel_h * s.kernel_w), rng, -0.5f, 0.5f);
  const std::vector<float> bias = RandomVector(static_cast<size_t>(s.out_channels), rng);
  const std::vector<float> residual =
      RandomVector(static_cast<size_t>(s.batch * s.out_channels * s.out_h * s.out_w), rng);
  std::vector<float> want(residual.size());
  ConvReference(s, x.data(), w.data(), with_bias ? bias.data() : nullptr, with_residual ? residual.data() : nullptr,
                act, want.data());
  const auto engine = engine_factory(s, w.data());
  const std::vector<float> got = RunEngine(engine, s, x, with_bias ? bias.data() : nullptr,
                                           with_residual ? &residual : nullptr, act, blocked, pool);
  std::ostringstream what;
  what << engine.name() << " " << Describe(s) << (blocked ? " NCHWc" : " NCHW") << (with_bias ? " bias" : "")
       << (with_residual ? " residual" : "") << " act " << static_cast<int>(act.kind);
  ExpectClose(got, want, tol, what.str());
}

}  // namespace onyx::linalg::testing
