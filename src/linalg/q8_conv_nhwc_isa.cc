// Where the AVX2 channels-last int8 convolution runs (portable: read before any AVX2 code).
#include <string_view>

#include "linalg/q8_conv_nhwc_avx2.h"
#include "linalg/q8_gemm_kernel.h"

namespace onyx::linalg {

#if defined(__x86_64__)
bool Q8ConvNhwcAvx2Selected() { return std::string_view(SelectedQ8GemmKernel().isa) == "avx2"; }
#else
bool Q8ConvNhwcAvx2Selected() { return false; }
#endif

}  // namespace onyx::linalg
