// The kernel variant a kernel ran (its algorithm and ISA), for the profiler's Node events: a
// kernel that picks among engines notes the one it took on the thread that called Compute, and
// the profiler takes the note right after Compute returns on that thread. While no profiler
// exists a note is one relaxed load of a global counter and an untaken branch; with one, two
// pointer stores to a thread-local slot. Both texts must outlive the call (static text, or text
// the kernel owns); the profiler copies them.
#pragma once

#include <atomic>

namespace onyx {

struct KernelVariant {
  const char* algorithm = nullptr;  // "winograd F(4x4,3x3)", "gemm packed B", ...
  const char* isa = nullptr;        // "avx512", "f32_gemm_avx2_6x16", ...
};

namespace kernel_variant_detail {
inline std::atomic<int> profilers{0};  // live Profiler objects, any session
inline thread_local KernelVariant current;
}  // namespace kernel_variant_detail

// Profiler's constructor and destructor: notes are kept only while some profiler exists.
inline void KernelVariantListenerAdded() noexcept {
  kernel_variant_detail::profilers.fetch_add(1, std::memory_order_relaxed);
}
inline void KernelVariantListenerRemoved() noexcept {
  kernel_variant_detail::profilers.fetch_sub(1, std::memory_order_relaxed);
}

inline void NoteKernelVariant(const char* algorithm, const char* isa) noexcept {
  if (kernel_variant_detail::profilers.load(std::memory_order_relaxed) == 0) return;
  kernel_variant_detail::current = KernelVariant{algorithm, isa};
}

// The note since the last take on this thread (empty when none), and clears it.
inline KernelVariant TakeKernelVariant() noexcept {
  const KernelVariant v = kernel_variant_detail::current;
  kernel_variant_detail::current = KernelVariant{};
  return v;
}

}  // namespace onyx
