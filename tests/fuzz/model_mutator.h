// Structure-aware mutation of ONNX models for the model harnesses: the bytes are parsed into a
// tree of protobuf fields with Onyx's own wire reader (src/onnx, no libprotobuf), edited the
// way broken exporters and corrupt files break models (issue 17's list: an attribute set to an
// extreme value, an input renamed to a missing or self-referencing name, an op type swapped,
// initializer dims or raw bytes changed, an input dim set to 0 or 2^40, a node deleted, two
// nodes swapped, the opset changed, ...) and written back. Fields the mutator does not know
// pass through unchanged, so a mutant of a mutant keeps every earlier edit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace onyx::fuzz {

// One to three edits of the model in `data`, chosen by `seed`; nullopt when the bytes are not a
// protobuf message, when no edit applies, or when the result would exceed `max_size` bytes.
std::optional<std::string> MutateModel(const uint8_t* data, size_t size, size_t max_size, uint32_t seed);

}  // namespace onyx::fuzz
