// The kernel variant a kernel ran (its algorithm and ISA), for the profiler's Node events: a
// kernel that picks among engines notes the one it took on the thread that called Compute, and
// the profiler takes the note right after Compute returns on that thread. Two pointer stores per
// call, nothing when no profiler reads them: both texts must outlive the call (static text, or
// text the kernel owns), and the profiler copies them.
#pragma once

namespace onyx {

struct KernelVariant {
  const char* algorithm = nullptr;  // "winograd F(4x4,3x3)", "gemm packed B", ...
  const char* isa = nullptr;        // "avx512", "f32_gemm_avx2_6x16", ...
};

namespace kernel_variant_detail {
inline thread_local KernelVariant current;
}

inline void NoteKernelVariant(const char* algorithm, const char* isa) noexcept {
  kernel_variant_detail::current = KernelVariant{algorithm, isa};
}

// The note since the last take on this thread (empty when none), and clears it.
inline KernelVariant TakeKernelVariant() noexcept {
  const KernelVariant v = kernel_variant_detail::current;
  kernel_variant_detail::current = KernelVariant{};
  return v;
}

}  // namespace onyx
