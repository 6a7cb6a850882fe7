#include "providers/cpu/kernels/linalg/deferred_half_widening.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "linalg/f16_widen.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define ONYX_DEFERRED_WIDENING 1
#endif

namespace onyx {
namespace {

struct Pending {
  Tensor half;  // undefined once the values are written
  size_t mapped_bytes = 0;
};

std::mutex& RegistryMutex() {
  static std::mutex m;
  return m;
}
// By the tensor's data pointer: every copy of the Tensor shares it.
std::unordered_map<const void*, Pending>& Registry() {
  static auto* r = new std::unordered_map<const void*, Pending>();  // never destroyed: holders may outlive statics
  return *r;
}
std::atomic<int64_t> bytes_written{0};

}  // namespace

Tensor DeferWidening(const Tensor& half) {
  if (half.dtype() != DataType::kFloat16 || half.size() == 0)
    throw Error(ErrorCode::kInvalidArgument,
                "DeferWidening: expects a non-empty float16 tensor, got " + half.Describe());
#ifdef ONYX_DEFERRED_WIDENING
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t bytes = (static_cast<size_t>(half.size()) * sizeof(float) + page - 1) / page * page;
  void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) {
#if defined(MADV_NOHUGEPAGE)
    // Written, if ever, only to be read by a kernel at creation: small pages (docs/memory.md).
    ::madvise(p, bytes, MADV_NOHUGEPAGE);
#endif
    {
      std::lock_guard<std::mutex> lock(RegistryMutex());
      Registry()[p] = Pending{half, bytes};
    }
    std::shared_ptr<void> holder(p, [bytes](void* q) {
      {
        std::lock_guard<std::mutex> lock(RegistryMutex());
        Registry().erase(q);
      }
      ::munmap(q, bytes);
    });
    return Tensor::View(DataType::kFloat, half.shape(), p, std::move(holder));
  }
#endif
  Tensor out(DataType::kFloat, half.shape());
  linalg::WidenHalf(static_cast<const uint16_t*>(half.raw_data()), out.data<float>(), half.size());
  NoteHalfWeightFloatCopy(out.byte_size());
  return out;
}

bool CanDeferWidening() {
#ifdef ONYX_DEFERRED_WIDENING
  return true;
#else
  return false;
#endif
}

bool IsDeferredWidening(const Tensor& t) { return DeferredHalfSource(t).defined(); }

Tensor DeferredHalfSource(const Tensor& t) {
  if (t.dtype() != DataType::kFloat || t.raw_data() == nullptr) return Tensor();
  std::lock_guard<std::mutex> lock(RegistryMutex());
  const auto it = Registry().find(t.raw_data());
  return it != Registry().end() ? it->second.half : Tensor();
}

void MaterializeDeferredWidening(const Tensor& t) {
  if (t.dtype() != DataType::kFloat || t.raw_data() == nullptr) return;
#ifdef ONYX_DEFERRED_WIDENING
  // Held while writing: a second reader waits for the values rather than seeing them half done.
  std::lock_guard<std::mutex> lock(RegistryMutex());
  const auto it = Registry().find(t.raw_data());
  if (it == Registry().end() || !it->second.half.defined()) return;
  void* p = const_cast<void*>(t.raw_data());
  if (::mprotect(p, it->second.mapped_bytes, PROT_READ | PROT_WRITE) != 0)
    throw Error(ErrorCode::kRuntime, "cannot make the widened copy of a float16 weight writable");
  const Tensor& half = it->second.half;
  linalg::WidenHalf(static_cast<const uint16_t*>(half.raw_data()), static_cast<float*>(p), half.size());
  bytes_written += half.size() * static_cast<int64_t>(sizeof(float));
  it->second.half = Tensor();
#endif
}

int64_t HalfWeightFloatCopyBytes() { return bytes_written.load(); }
void NoteHalfWeightFloatCopy(int64_t bytes) { bytes_written += bytes; }

}  // namespace onyx
