// libFuzzer harness for the model loader: any bytes either load (then pass the loader's
// validation) or throw onyx::Error; anything else (a crash, a sanitizer report, another
// exception) is a bug. Build with the `fuzz` CMake preset; seed it with real models:
//   build/fuzz/tests/fuzz/onyx_fuzz_load_model corpus/ -max_len=1000000
#include <cstddef>
#include <cstdint>

#include "onnx/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Small limits keep a fuzzed model from asking for gigabytes of weights before failing.
  onyx::LoadLimits limits;
  limits.max_elements = int64_t{1} << 24;
  try {
    onyx::LoadModelFromBytes(data, size, limits);
  } catch (const onyx::Error&) {
  }
  return 0;
}
