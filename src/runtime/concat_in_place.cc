#include "runtime/concat_in_place.h"

#include <optional>

#include "ir/node.h"
#include "onyx/allocator.h"

namespace onyx {
namespace {

std::optional<Shape> Resolve(const std::vector<Dim>& dims, const SymbolValues& symbols) {
  Shape shape;
  for (const Dim& d : dims) {
    if (d.known()) {
      shape.push_back(d.value);
      continue;
    }
    const auto it = d.param.empty() ? symbols.end() : symbols.find(d.param);
    if (it == symbols.end()) return std::nullopt;
    shape.push_back(it->second);
  }
  return shape;
}

int64_t Product(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

std::vector<ConcatPlacement> PlanConcatPlacements(const std::vector<ConcatPlanStep>& steps,
                                                  const std::vector<char>& pinned_slots,
                                                  const TypeLookup& type_of) {
  std::unordered_map<int, int> producer;  // slot -> step
  for (size_t s = 0; s < steps.size(); ++s)
    for (int slot : steps[s].outputs)
      if (slot >= 0) producer[slot] = static_cast<int>(s);

  std::vector<ConcatPlacement> placements;
  std::vector<char> placed(pinned_slots.size(), 0);
  for (const ConcatPlanStep& step : steps) {
    const ir::Node& node = *step.node;
    if (node.op_type != "Concat" || !node.domain.empty() || !step.on_cpu || node.opset < 4) continue;
    if (step.outputs.size() != 1 || step.outputs[0] < 0 || step.inputs.size() < 2) continue;
    const ir::Attribute* axis_attr = node.FindAttribute("axis");
    const auto out_type = type_of(node.outputs[0]);
    if (axis_attr == nullptr || out_type == nullptr || out_type->kind != TypeInfo::Kind::kTensor || !out_type->shape)
      continue;
    ConcatPlacement p;
    p.concat_slot = step.outputs[0];
    p.dtype = out_type->elem_type;
    p.output_dims = *out_type->shape;
    const auto rank = static_cast<int64_t>(p.output_dims.size());
    p.axis = axis_attr->i < 0 ? axis_attr->i + rank : axis_attr->i;
    if (rank == 0 || p.axis < 0 || p.axis >= rank || IsSubByte(p.dtype) || p.dtype == DataType::kString ||
        p.dtype == DataType::kUndefined)
      continue;
    // Without every input's (symbolic) shape the slices cannot be placed.
    for (const std::string& name : node.inputs) {
      const auto type = name.empty() ? nullptr : type_of(name);
      if (type == nullptr || type->kind != TypeInfo::Kind::kTensor || !type->shape || type->elem_type != p.dtype ||
          static_cast<int64_t>(type->shape->size()) != rank)
        break;
      p.input_dims.push_back(*type->shape);
    }
    if (p.input_dims.size() != node.inputs.size()) continue;
    bool any_placeable = false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int slot = step.inputs[i];
      const auto made_by = producer.find(slot);
      bool placeable = made_by != producer.end() && steps[made_by->second].on_cpu && !pinned_slots[slot] && !placed[slot];
      for (size_t j = i + 1; j < node.inputs.size(); ++j) placeable = placeable && step.inputs[j] != slot;
      if (placeable) placed[slot] = 1;
      p.placeable.push_back(placeable ? slot : -1);
      any_placeable = any_placeable || placeable;
    }
    if (any_placeable) placements.push_back(std::move(p));
  }
  return placements;
}

ConcatLayout PlaceConcatSlices(const std::vector<ConcatPlacement>& placements, const SymbolValues& symbols) {
  ConcatLayout layout;
  for (const ConcatPlacement& p : placements) {
    const auto out_shape = Resolve(p.output_dims, symbols);
    if (!out_shape) continue;
    bool contiguous = true;
    for (int64_t d = 0; d < p.axis; ++d) contiguous = contiguous && (*out_shape)[static_cast<size_t>(d)] == 1;
    if (!contiguous) continue;
    std::vector<Shape> shapes;
    for (const auto& dims : p.input_dims) {
      const auto shape = Resolve(dims, symbols);
      if (!shape) break;
      shapes.push_back(*shape);
    }
    if (shapes.size() != p.input_dims.size()) continue;
    int64_t offset = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const int64_t bytes = StorageBytes(p.dtype, Product(shapes[i]));
      if (p.placeable[i] >= 0 && bytes > 0 && offset % static_cast<int64_t>(Allocator::kAlignment) == 0)
        layout.slices[p.placeable[i]] = ConcatSlice{p.concat_slot, offset, p.dtype, shapes[i], *out_shape};
      offset += bytes;
    }
    layout.input_shapes[p.concat_slot] = std::move(shapes);
  }
  return layout;
}

}  // namespace onyx
