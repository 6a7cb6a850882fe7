// libFuzzer's hook for the model harnesses (load_model, session): most mutations are
// structure-aware edits of the model (model_mutator.h); the rest, and every input that is not a
// parseable protobuf, go to libFuzzer's own byte mutations, which also find what a
// well-formed edit cannot (truncation, bad lengths, bad UTF-8). Linked only into libFuzzer
// builds: the replay build has no LLVMFuzzerMutate.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "model_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 5 != 0) {
    if (auto mutant = onyx::fuzz::MutateModel(data, size, max_size, seed)) {
      std::memcpy(data, mutant->data(), mutant->size());
      return mutant->size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
