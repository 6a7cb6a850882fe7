// Q8Lookup: y[i] = table[x[i]] over 8-bit codes, the body of the int8 lookup-table ops
// (com.microsoft QLinearSigmoid, QLinearLeakyRelu: their float function is exact per code, so
// a 256-entry table of requantized results replaces it). Per ISA, best first: AVX-512 VBMI
// (two vpermi2b, 128 entries each), AVX-512 BW and AVX2 (vpshufb over the 16 rows of 16 entries,
// selected by the high nibble), scalar.
#pragma once

#include <cstdint>

namespace onyx::linalg {

// The table of QLinearSigmoid (x params sx, zx; output sy, zy) then QLinearMul of x by that
// output (the mul's output sc, zc): SiLU, x * sigmoid(x), as ONNX Runtime's two int8 ops compute
// it (each code's sigmoid requantized, then the integer product times sx * sy / sc, rounded half
// to even: linalg::Q8MulU8 / S8's arithmetic). Codes are bytes (an int8 code at its stored byte).
void Q8SiluTable(bool is_signed, float sx, int32_t zx, float sy, int32_t zy, float sc, int32_t zc, uint8_t* table);
// QLinearSigmoid's table alone: round(sigmoid(sx (x - zx)) / sy) + zy, saturated, with ONNX
// Runtime's logistic (VecSigmoidAsOnnxRuntime), as its own table is built.
void Q8SigmoidTable(bool is_signed, float sx, int32_t zx, float sy, int32_t zy, uint8_t* table);

// The variant follows the SGEMM's ISA (ForceIsa / ONYX_LINALG_ISA); AVX-512 adds VBMI where the
// CPU has it.
void Q8Lookup(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y);

// Each variant, for tests (a variant runs only where the CPU has its ISA).
void Q8LookupScalar(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y);
#if defined(__x86_64__)
void Q8LookupAvx2(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y);
void Q8LookupAvx512(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y);
void Q8LookupAvx512Vbmi(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y);
bool Q8LookupVbmiSupported();
#endif

}  // namespace onyx::linalg
