// Concat without the copy: where a Concat's output is one contiguous run of its inputs (every
// dim before the axis is 1, e.g. the channels of one image, plain or NCHWc-blocked), the nodes
// that produce its inputs can write straight into their slices of the output. The plan finds
// the candidates from the inferred shapes, which may name the graph inputs' symbolic dims
// ("batch"); each Run binds those symbols and places the slices. At run time a producer's
// output becomes a view into the Concat's output (allocated by the first producer), and the
// Concat kernel skips the slices already in place. A producer whose actual shape differs from
// the planned one simply gets its own memory.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "onyx/tensor.h"
#include "onyx/value.h"

namespace onyx {

namespace ir {
class Node;
}  // namespace ir

// A value's place in a Concat's output, for one Run.
struct ConcatSlice {
  int concat_slot = -1;     // the Concat's output
  int64_t byte_offset = 0;  // where this input starts in it
  DataType dtype = DataType::kUndefined;
  Shape shape;         // this input's shape
  Shape concat_shape;  // the Concat output's shape
};

// A Concat whose inputs may be placed, with its shapes as inferred (possibly symbolic).
struct ConcatPlacement {
  int concat_slot = -1;
  int64_t axis = 0;  // non-negative
  DataType dtype = DataType::kUndefined;
  std::vector<int> placeable;  // per input: its slot, or -1 when it keeps its own memory
  std::vector<std::vector<Dim>> input_dims;
  std::vector<Dim> output_dims;
};

// One step of the plan as the analysis sees it.
struct ConcatPlanStep {
  const ir::Node* node = nullptr;
  bool on_cpu = false;
  std::vector<int> inputs, outputs;  // slots, -1 when omitted
};

using TypeLookup = std::function<std::shared_ptr<const TypeInfo>(const std::string&)>;

// The Concats whose inputs producers may write in place. Never placed: values that are graph
// outputs or read by subgraphs (`pinned_slots`), values not made by a CPU step of this graph,
// and a value fed twice or to two Concats after its first place.
std::vector<ConcatPlacement> PlanConcatPlacements(const std::vector<ConcatPlanStep>& steps,
                                                  const std::vector<char>& pinned_slots,
                                                  const TypeLookup& type_of);

// Values of the graph inputs' symbolic dims in one Run.
using SymbolValues = std::unordered_map<std::string, int64_t>;

// Where values go in one Run: only Concats whose shapes are all known under `symbols` and whose
// dims before the axis are 1, and slices at offsets as aligned as fresh memory.
struct ConcatLayout {
  std::unordered_map<int, ConcatSlice> slices;               // by the slot of the value placed
  std::unordered_map<int, std::vector<Shape>> input_shapes;  // by the Concat's output slot
};
ConcatLayout PlaceConcatSlices(const std::vector<ConcatPlacement>& placements, const SymbolValues& symbols);

}  // namespace onyx
