// Cast(Cast(x, T1), T2) becomes Cast(x, T2), or x itself when T2 is x's type, if the first cast
// is lossless (T1 holds every value of x's type exactly) (basic).
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

// Whether every value of `from` converts to `to` and back unchanged.
bool Lossless(DataType from, DataType to) {
  if (from == to) return true;
  auto rank_in = [](DataType t, std::initializer_list<DataType> chain) {
    int i = 0;
    for (DataType c : chain) {
      if (c == t) return i;
      ++i;
    }
    return -1;
  };
  const auto sints = {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64};
  const auto uints = {DataType::kUInt8, DataType::kUInt16, DataType::kUInt32, DataType::kUInt64};
  const auto floats = {DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  for (const auto& chain : {sints, uints, floats}) {
    const int a = rank_in(from, chain), b = rank_in(to, chain);
    if (a >= 0 && b >= 0) return b >= a;
  }
  // Unsigned into a wider signed type; small integers into floats with enough mantissa.
  if (IsUnsignedInteger(from) && IsSignedInteger(to)) return DataTypeBits(to) > DataTypeBits(from);
  if (from == DataType::kBool) return to != DataType::kString && to != DataType::kUndefined;
  if ((from == DataType::kInt8 || from == DataType::kUInt8) && IsFloatingPoint(to) && DataTypeBits(to) >= 16)
    return true;
  if ((from == DataType::kInt16 || from == DataType::kUInt16) && (to == DataType::kFloat || to == DataType::kDouble))
    return true;
  if ((from == DataType::kInt32 || from == DataType::kUInt32) && to == DataType::kDouble) return true;
  return false;
}

class CastChainElimination final : public Pass {
 public:
  std::string name() const override { return "CastChainElimination"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* second : editor.NodesOfType("Cast")) {
      ir::Node* first = editor.Producer(second->inputs[0]);
      if (!IsOp(first, "Cast") || editor.UseCount(first->outputs[0]) != 1) continue;
      const TypeInfo* xt = editor.TypeOf(first->inputs[0]);
      if (xt == nullptr || xt->kind != TypeInfo::Kind::kTensor || xt->elem_type == DataType::kUndefined) continue;
      const auto t1 = static_cast<DataType>(AttrInt(*first, "to", 0));
      if (!Lossless(xt->elem_type, t1)) continue;
      editor.RemoveNode(first);
      editor.SetInput(second, 0, first->inputs[0]);
      ++ctx.counts["merged Casts"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(CastChainElimination, 75);

}  // namespace
}  // namespace onyx
