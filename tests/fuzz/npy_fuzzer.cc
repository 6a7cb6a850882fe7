// libFuzzer harness for the .npy reader `onyx run --input NAME=FILE.npy` uses (src/tensor/npy.cc):
// any bytes either read as a tensor or throw onyx::Error; anything else (a crash, a sanitizer
// report, another exception) is a bug. A tensor that reads is described and its strings
// walked, so a shape that disagrees with the bytes read shows up under ASan.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_bytes.h"
#include "scratch_file.h"
#include "tensor/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = onyx::fuzz::WriteScratchFile("input.npy", data, size);
  try {
    const onyx::Tensor t = onyx::ReadNpy(path);
    (void)t.Describe();
    if (t.dtype() == onyx::DataType::kString) {
      size_t total = 0;
      for (int64_t i = 0; i < t.size(); ++i) total += t.data<std::string>()[i].size();
      (void)total;
    } else if (t.byte_size() > 0) {
      const auto* bytes = static_cast<const uint8_t*>(t.raw_data());
      (void)onyx::fuzz::HashBytes(bytes, static_cast<size_t>(t.byte_size()));
    }
  } catch (const onyx::Error&) {
  }
  return 0;
}
