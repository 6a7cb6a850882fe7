// The ops HalfBodyToFloat may compute in float32 instead of float16/bfloat16: only ops whose
// float computation is at least as accurate as the half one, whose half inputs and outputs all
// share the one type T (so that T can become float), and whose attributes carry no type.
// Everything else (Cast, comparisons, ConstantOfShape, random ops, control flow...) stays half
// with Casts around it.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

namespace onyx {

struct HalfBodyOp {
  // Math (joins the float body wherever it computes in a half type) or data movement (joins
  // only next to the body: alone it needs no float math, and two Casts would cost more).
  bool computes = true;
  // Floating-point inputs of a type of their own (Resize's roi and scales, Pow's exponent,
  // Dropout's ratio): they keep their type when the node turns float.
  std::vector<size_t> own_type_inputs;

  bool KeepsInput(size_t i) const {
    for (size_t k : own_type_inputs)
      if (k == i) return true;
    return false;
  }
};

// Null when the op is not allowed in a float body.
const HalfBodyOp* FindHalfBodyOp(const std::string& domain, const std::string& op_type);

}  // namespace onyx
