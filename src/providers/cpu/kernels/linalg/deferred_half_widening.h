// A float tensor standing for the exact widening of a float16 weight whose values are not
// written until something needs them. HalfBodyToFloat gives a float16 model's MatMul / Gemm
// weights such a float initializer: their kernels pack straight from the float16 bits
// (PackConstantB), so the creation makes no float copy of each whole weight and drops it, and
// any other reader first writes the values in place (MaterializeDeferredWidening), which every
// copy of the tensor then sees.
//
// Until then the tensor's bytes are an inaccessible reservation: a reader that skipped
// MaterializeDeferredWidening faults at once instead of reading wrong values.
#pragma once

#include <cstdint>

#include "onyx/tensor.h"

namespace onyx {

// A float tensor of half's shape standing for its widening (half: float16); half's bytes must
// stay valid as long as the result lives (it keeps a copy of `half`). Where the platform cannot
// reserve memory without backing it, the widened copy itself.
Tensor DeferWidening(const Tensor& half);

// Whether this platform defers at all (it can reserve memory without backing it: Linux and the
// other Unix systems); elsewhere DeferWidening returns the widened copy at once.
bool CanDeferWidening();

// Whether t is such a tensor whose values are not written yet.
bool IsDeferredWidening(const Tensor& t);

// The float16 source of t while its values are not written yet; an undefined Tensor otherwise.
Tensor DeferredHalfSource(const Tensor& t);

// Writes t's values in place if it is a deferred widening not written yet; otherwise nothing.
void MaterializeDeferredWidening(const Tensor& t);

// Bytes of float copies of half weights written in this process: by MaterializeDeferredWidening
// and by HalfBodyToFloat's copies made at once (it calls NoteHalfWeightFloatCopy). For tests.
int64_t HalfWeightFloatCopyBytes();
void NoteHalfWeightFloatCopy(int64_t bytes);

}  // namespace onyx
