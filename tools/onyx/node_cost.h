// Work a kernel run did, from what a profile records of it (op and tensor shapes): floating-point
// operations where the op's arithmetic is known, and bytes moved (inputs, weights, outputs).
#pragma once

#include <cstdint>

#include "trace_reader.h"

namespace onyx::cli {

// Multiply-adds count 2. -1 when the op is not one whose count is known from shapes alone:
// Conv (FusedConv, NchwcConv, QLinearConv, ConvInteger), ConvTranspose, MatMul (FusedMatMul,
// MatMulInteger, QLinearMatMul, MatMulNBits by its output and K), Gemm, Attention,
// MultiHeadAttention, GroupQueryAttention.
double NodeFlops(const TraceEvent& e);

// activation + parameter + output bytes; -1 when the file does not say.
double NodeBytes(const TraceEvent& e);

}  // namespace onyx::cli
