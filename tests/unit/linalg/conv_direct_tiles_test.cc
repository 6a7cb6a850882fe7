// The direct tile kernel (every ISA variant) computing a run of several equal tiles in one call
// (DirectTileArgs::tiles), against a hand-written sum: each tile reads its own strided pixels,
// writes its own outputs and adds its own residual, in a first input-channel chunk that leaves
// partial sums in y and a last one that accumulates onto them and finishes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "linalg/conv.h"
#include "linalg/conv_test_util.h"
#include "linalg/f32_conv_kernel.h"

namespace onyx::linalg {
namespace {

TEST(ConvDirectTiles, RunOfTilesMatchesHandSum) {
  testing::ForEachIsa([](const std::string&) {
    const ConvKernelTable& k = SelectedConvKernels();
    const int64_t b = k.block;
    const int fb = std::min(2, k.max_filter_blocks);
    const int px = std::min(3, k.max_pixels[fb]);
    const int64_t tiles = 4, pixels = tiles * px, stride = 2, in_blocks = 2;
    const int64_t plane = pixels * stride;  // input pixels per block
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    auto fill = [&](std::vector<float>& v) {
      for (float& f : v) f = dist(rng);
    };
    std::vector<float> x(static_cast<size_t>(in_blocks * plane * b)), w(static_cast<size_t>(fb * in_blocks * b * b));
    std::vector<float> bias(static_cast<size_t>(fb * b)), residual(static_cast<size_t>(fb * pixels * b));
    fill(x);
    fill(w);
    fill(bias);
    fill(residual);
    // want[f][p][o] = relu(bias + sum over input channels of w * x at pixel p * stride + residual)
    std::vector<float> want(residual.size());
    for (int64_t f = 0; f < fb; ++f)
      for (int64_t p = 0; p < pixels; ++p)
        for (int64_t o = 0; o < b; ++o) {
          double sum = bias[f * b + o];
          for (int64_t cb = 0; cb < in_blocks; ++cb)
            for (int64_t c = 0; c < b; ++c)
              sum += static_cast<double>(w[((f * in_blocks + cb) * b + c) * b + o]) *
                     x[(cb * plane + p * stride) * b + c];
          sum += residual[(f * pixels + p) * b + o];
          want[(f * pixels + p) * b + o] = static_cast<float>(std::max(sum, 0.0));
        }

    ConvActivation relu;
    relu.kind = ConvActivation::kRelu;
    const int64_t tap_offset = 0;
    const int32_t tap_index = 0;
    std::vector<float> y(want.size(), -7.0f);
    DirectTileArgs a;
    a.x_pixel_stride = stride * b;
    a.x_channel_stride = 1;
    a.x_block_stride = plane * b;
    a.in_blocks = 1;
    a.last_block_channels = b;
    a.tap_offsets = &tap_offset;
    a.tap_index = &tap_index;
    a.taps = 1;
    a.kernel_taps = 1;
    a.w_fb_stride = in_blocks * b * b;
    a.bias = bias.data();
    a.y = y.data();
    a.y_pixel_stride = b;
    a.y_fb_stride = pixels * b;
    a.residual = residual.data();
    a.act = &relu;
    a.tiles = tiles;
    for (int64_t cb = 0; cb < in_blocks; ++cb) {  // one input block per chunk
      a.x = x.data() + cb * plane * b;
      a.w = w.data() + cb * b * b;
      a.accumulate = cb > 0;
      a.finish = cb + 1 == in_blocks;
      k.direct_tile(a, fb, px);
    }
    testing::ExpectClose(y, want, 1e-5f, std::string(k.isa) + " run of tiles");
  });
}

}  // namespace
}  // namespace onyx::linalg
