#include "model_mutator.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "onnx/wire_reader.h"
#include "onyx/error.h"

namespace onyx::fuzz {
namespace {

using proto::WireReader;
using proto::WireType;

// The ONNX messages the mutator edits; anything else stays bytes.
enum class Kind { kBytes, kModel, kGraph, kNode, kAttribute, kTensor, kValueInfo, kType, kTypeTensor, kTypeElem,
                  kShape, kDim, kOpset, kFunction };

// Field numbers of onnx.proto3 that hold the messages above.
Kind ChildKind(Kind parent, uint32_t field) {
  switch (parent) {
    case Kind::kModel: return field == 7 ? Kind::kGraph : field == 8 ? Kind::kOpset : field == 25 ? Kind::kFunction : Kind::kBytes;
    case Kind::kGraph:
      return field == 1 ? Kind::kNode : field == 5 ? Kind::kTensor
           : (field == 11 || field == 12 || field == 13) ? Kind::kValueInfo : Kind::kBytes;
    case Kind::kNode: return field == 5 ? Kind::kAttribute : Kind::kBytes;
    case Kind::kAttribute:
      return (field == 5 || field == 10) ? Kind::kTensor : (field == 6 || field == 11) ? Kind::kGraph : Kind::kBytes;
    case Kind::kFunction: return field == 7 ? Kind::kNode : field == 9 ? Kind::kOpset : Kind::kBytes;
    case Kind::kValueInfo: return field == 2 ? Kind::kType : Kind::kBytes;
    case Kind::kType: return field == 1 ? Kind::kTypeTensor : (field == 4 || field == 9) ? Kind::kTypeElem : Kind::kBytes;
    case Kind::kTypeElem: return field == 1 ? Kind::kType : Kind::kBytes;
    case Kind::kTypeTensor: return field == 2 ? Kind::kShape : Kind::kBytes;
    case Kind::kShape: return field == 1 ? Kind::kDim : Kind::kBytes;
    default: return Kind::kBytes;
  }
}

struct Message;

struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t scalar = 0;              // varint, fixed32 and fixed64 bits
  std::string bytes;                // length-delimited, when not parsed as a message
  std::shared_ptr<Message> message;  // length-delimited, parsed
};

struct Message {
  Kind kind = Kind::kBytes;
  std::vector<Field> fields;
};

constexpr int kMaxDepth = 32;

std::shared_ptr<Message> Parse(const uint8_t* begin, const uint8_t* end, Kind kind, int depth) {
  if (depth > kMaxDepth) throw Error(ErrorCode::kInvalidProtobuf, "nested too deeply");
  auto m = std::make_shared<Message>();
  m->kind = kind;
  WireReader r(begin, end, "mutator");
  while (r.Next()) {
    Field f;
    f.number = r.field();
    f.type = r.wire_type();
    switch (f.type) {
      case WireType::kVarint: f.scalar = r.ReadVarint(); break;
      case WireType::kFixed32: f.scalar = r.ReadFixed32(); break;
      case WireType::kFixed64: f.scalar = r.ReadFixed64(); break;
      case WireType::kLengthDelimited: {
        const std::string_view b = r.ReadBytes();
        const Kind child = ChildKind(kind, f.number);
        const auto* p = reinterpret_cast<const uint8_t*>(b.data());
        if (child != Kind::kBytes) {
          try {
            f.message = Parse(p, p + b.size(), child, depth + 1);
          } catch (const Error&) {
            f.message.reset();
          }
        }
        if (!f.message) f.bytes.assign(b);
        break;
      }
      default: r.Fail("group fields are not mutated");
    }
    m->fields.push_back(std::move(f));
  }
  return m;
}

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void Serialize(const Message& m, std::string& out) {
  for (const Field& f : m.fields) {
    PutVarint(out, (static_cast<uint64_t>(f.number) << 3) | static_cast<uint64_t>(f.type));
    switch (f.type) {
      case WireType::kVarint: PutVarint(out, f.scalar); break;
      case WireType::kFixed32: {
        const auto v = static_cast<uint32_t>(f.scalar);
        out.append(reinterpret_cast<const char*>(&v), 4);
        break;
      }
      case WireType::kFixed64: out.append(reinterpret_cast<const char*>(&f.scalar), 8); break;
      default: {
        if (f.message) {
          std::string child;
          Serialize(*f.message, child);
          PutVarint(out, child.size());
          out += child;
        } else {
          PutVarint(out, f.bytes.size());
          out += f.bytes;
        }
      }
    }
  }
}

void Collect(Message& m, std::vector<Message*> (&by_kind)[16]) {
  by_kind[static_cast<int>(m.kind)].push_back(&m);
  for (Field& f : m.fields)
    if (f.message) Collect(*f.message, by_kind);
}

std::vector<Field*> FieldsOf(Message& m, uint32_t number) {
  std::vector<Field*> out;
  for (Field& f : m.fields)
    if (f.number == number) out.push_back(&f);
  return out;
}

Field& AddField(Message& m, uint32_t number, WireType type) {
  Field f;
  f.number = number;
  f.type = type;
  m.fields.push_back(std::move(f));
  return m.fields.back();
}

// The value of a string field (first occurrence), or "".
std::string StringOf(Message& m, uint32_t number) {
  for (Field& f : m.fields)
    if (f.number == number && f.type == WireType::kLengthDelimited && !f.message) return f.bytes;
  return "";
}

void SetString(Field& f, const std::string& s) {
  f.type = WireType::kLengthDelimited;
  f.message.reset();
  f.bytes = s;
}

// Repeated int64 (packed or not) read as a list and written back unpacked.
std::vector<int64_t> TakeInts(Message& m, uint32_t number) {
  std::vector<int64_t> values;
  std::vector<Field> kept;
  for (Field& f : m.fields) {
    if (f.number != number) {
      kept.push_back(std::move(f));
      continue;
    }
    if (f.type == WireType::kVarint) {
      values.push_back(static_cast<int64_t>(f.scalar));
    } else if (f.type == WireType::kLengthDelimited && !f.message) {
      try {
        WireReader r(reinterpret_cast<const uint8_t*>(f.bytes.data()),
                     reinterpret_cast<const uint8_t*>(f.bytes.data()) + f.bytes.size(), "packed");
        while (!r.AtEnd()) values.push_back(r.ReadInt64());
      } catch (const Error&) {
      }
    }
  }
  m.fields = std::move(kept);
  return values;
}

void PutInts(Message& m, uint32_t number, const std::vector<int64_t>& values) {
  for (int64_t v : values) AddField(m, number, WireType::kVarint).scalar = static_cast<uint64_t>(v);
}

class Mutator {
 public:
  Mutator(Message& model, uint32_t seed) : model_(model), rng_(seed) { Collect(model_, by_kind_); }

  bool MutateOnce() {
    using Edit = bool (Mutator::*)();
    static const Edit kEdits[] = {&Mutator::AttributeExtreme, &Mutator::InputMissing, &Mutator::InputSelf,
                                  &Mutator::InputLater,       &Mutator::OpSwap,       &Mutator::InitializerDims,
                                  &Mutator::InitializerBytes, &Mutator::InputDim,     &Mutator::NodeDelete,
                                  &Mutator::NodeSwap,         &Mutator::Opset,        &Mutator::DuplicateOutput,
                                  &Mutator::ElemType,         &Mutator::InputRank,    &Mutator::NodeDuplicate};
    for (int attempt = 0; attempt < 8; ++attempt)
      if ((this->*kEdits[Below(std::size(kEdits))])()) return true;
    return false;
  }

 private:
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }
  template <typename T>
  T* PickOf(const std::vector<T*>& v) { return v.empty() ? nullptr : v[Below(v.size())]; }
  Message* Pick(Kind k) { return PickOf(by_kind_[static_cast<int>(k)]); }
  int64_t Extreme() {
    static const int64_t kInts[] = {0, -1, 1, 2, -2, INT32_MAX, INT32_MIN, int64_t{1} << 40, -(int64_t{1} << 40),
                                    int64_t{1} << 62, INT64_MIN, INT64_MAX, 1000003, 3, 64, 65};
    return kInts[Below(std::size(kInts))];
  }
  // A node's output names (field 2).
  static std::vector<Field*> Outputs(Message& node) { return FieldsOf(node, 2); }
  static std::vector<Field*> Inputs(Message& node) { return FieldsOf(node, 1); }

  bool AttributeExtreme() {
    Message* a = Pick(Kind::kAttribute);
    if (a == nullptr) return false;
    switch (Below(5)) {
      case 0: {  // i
        auto fs = FieldsOf(*a, 3);
        Field& f = fs.empty() ? AddField(*a, 3, WireType::kVarint) : *fs[0];
        f.type = WireType::kVarint;
        f.message.reset();
        f.scalar = static_cast<uint64_t>(Extreme());
        return true;
      }
      case 1: {  // ints
        std::vector<int64_t> ints = TakeInts(*a, 8);
        if (!ints.empty() && Below(4) != 0) {
          ints[Below(ints.size())] = Extreme();
        } else {
          ints.clear();
          for (size_t n = Below(9); n > 0; --n) ints.push_back(Extreme());
        }
        PutInts(*a, 8, ints);
        return true;
      }
      case 2: {  // f
        static const float kFloats[] = {0.0f, -0.0f, 1e38f, -1e38f, __builtin_inff(), -__builtin_inff(),
                                        __builtin_nanf(""), 1e-45f};
        auto fs = FieldsOf(*a, 2);
        Field& f = fs.empty() ? AddField(*a, 2, WireType::kFixed32) : *fs[0];
        f.type = WireType::kFixed32;
        f.message.reset();
        uint32_t bits;
        std::memcpy(&bits, &kFloats[Below(std::size(kFloats))], 4);
        f.scalar = bits;
        return true;
      }
      case 3: {  // s
        static const char* kStrings[] = {"", "\xff\xfe bad", "NOTAMODE", "SAME_UPPER", "VALID"};
        auto fs = FieldsOf(*a, 4);
        SetString(fs.empty() ? AddField(*a, 4, WireType::kLengthDelimited) : *fs[0], kStrings[Below(std::size(kStrings))]);
        return true;
      }
      default: {  // type
        auto fs = FieldsOf(*a, 20);
        Field& f = fs.empty() ? AddField(*a, 20, WireType::kVarint) : *fs[0];
        f.type = WireType::kVarint;
        f.scalar = Below(16);
        return true;
      }
    }
  }

  Field* PickInput() {
    Message* n = Pick(Kind::kNode);
    return n ? PickOf(Inputs(*n)) : nullptr;
  }

  bool InputMissing() {
    static const char* kNames[] = {"missing_value", "", "\xff\xfe\xc3(bad"};
    Field* in = PickInput();
    if (in == nullptr) return false;
    SetString(*in, kNames[Below(std::size(kNames))]);
    return true;
  }

  bool InputSelf() {
    Message* n = Pick(Kind::kNode);
    if (n == nullptr) return false;
    Field* in = PickOf(Inputs(*n));
    auto outs = Outputs(*n);
    if (in == nullptr || outs.empty()) return false;
    SetString(*in, outs[Below(outs.size())]->bytes);
    return true;
  }

  // An input read from a node further down the list (a cycle when that node is downstream).
  bool InputLater() {
    Message* g = Pick(Kind::kGraph);
    if (g == nullptr) return false;
    auto nodes = FieldsOf(*g, 1);
    if (nodes.size() < 2) return false;
    const size_t i = Below(nodes.size() - 1);
    const size_t j = i + 1 + Below(nodes.size() - i - 1);
    if (!nodes[i]->message || !nodes[j]->message) return false;
    Field* in = PickOf(Inputs(*nodes[i]->message));
    auto outs = Outputs(*nodes[j]->message);
    if (in == nullptr || outs.empty()) return false;
    SetString(*in, outs[0]->bytes);
    return true;
  }

  bool OpSwap() {
    static const char* kOps[] = {"Concat", "Reshape", "Gather", "Slice", "Transpose", "Conv", "MatMul", "Gemm", "Add",
                                 "Split", "Squeeze", "Unsqueeze", "Expand", "Tile", "Pad", "Resize", "Softmax",
                                 "Identity", "Shape", "Cast", "ReduceMean", "LayerNormalization", "Loop", "If",
                                 "Scan", "NotAnOp", "Attention", "SkipLayerNormalization", "ConstantOfShape", "Range",
                                 "Where", "TopK", "NonZero", "Einsum", "BatchNormalization", "MaxPool", ""};
    Message* n = Pick(Kind::kNode);
    if (n == nullptr) return false;
    std::string op = kOps[Below(std::size(kOps))];
    if (Below(3) == 0) {  // an op type from elsewhere in the model
      if (Message* other = Pick(Kind::kNode)) op = StringOf(*other, 4);
    }
    auto fs = FieldsOf(*n, 4);
    SetString(fs.empty() ? AddField(*n, 4, WireType::kLengthDelimited) : *fs[0], op);
    if (Below(4) == 0) {  // and sometimes the domain
      static const char* kDomains[] = {"", "com.microsoft", "ai.onnx.ml", "ai.onnx", "unknown.domain"};
      auto ds = FieldsOf(*n, 7);
      SetString(ds.empty() ? AddField(*n, 7, WireType::kLengthDelimited) : *ds[0], kDomains[Below(std::size(kDomains))]);
    }
    return true;
  }

  // A tensor among the initializers (graph field 5) and attribute tensors.
  Message* PickTensor() { return Pick(Kind::kTensor); }

  bool InitializerDims() {
    Message* t = PickTensor();
    if (t == nullptr) return false;
    if (Below(4) == 0) {  // data_type
      static const uint64_t kTypes[] = {0, 1, 2, 7, 8, 10, 16, 17, 21, 22, 23, 99};
      auto fs = FieldsOf(*t, 2);
      Field& f = fs.empty() ? AddField(*t, 2, WireType::kVarint) : *fs[0];
      f.type = WireType::kVarint;
      f.scalar = kTypes[Below(std::size(kTypes))];
      return true;
    }
    std::vector<int64_t> dims = TakeInts(*t, 1);
    static const int64_t kDims[] = {0, 1, 2, 3, -1, -7, int64_t{1} << 31, int64_t{1} << 40, int64_t{1} << 62};
    switch (Below(3)) {
      case 0:
        if (!dims.empty()) {
          dims[Below(dims.size())] = kDims[Below(std::size(kDims))];
          break;
        }
        [[fallthrough]];
      case 1: dims.push_back(kDims[Below(4)]); break;
      default:
        if (!dims.empty()) dims.pop_back();
    }
    // Dims go before the data, as exporters write them.
    std::vector<Field> rest = std::move(t->fields);
    t->fields.clear();
    PutInts(*t, 1, dims);
    for (Field& f : rest) t->fields.push_back(std::move(f));
    return true;
  }

  bool InitializerBytes() {
    Message* t = PickTensor();
    if (t == nullptr) return false;
    auto fs = FieldsOf(*t, 9);
    if (fs.empty() || fs[0]->bytes.empty()) return false;
    std::string& raw = fs[0]->bytes;
    if (Below(2) == 0) {
      raw.resize(Below(raw.size()));
    } else {
      for (size_t n = 1 + Below(8); n > 0; --n) raw[Below(raw.size())] = static_cast<char>(rng_());
    }
    return true;
  }

  // The dims of a graph input (not of an output or value_info).
  std::vector<Message*> InputDims() {
    std::vector<Message*> dims;
    for (Message* g : by_kind_[static_cast<int>(Kind::kGraph)])
      for (Field* vi : FieldsOf(*g, 11))
        if (vi->message) {
          std::vector<Message*> all[16];
          Collect(*vi->message, all);
          for (Message* d : all[static_cast<int>(Kind::kDim)]) dims.push_back(d);
        }
    return dims;
  }

  bool InputDim() {
    std::vector<Message*> dims = InputDims();
    Message* d = PickOf(dims);
    if (d == nullptr) return false;
    static const int64_t kValues[] = {0, int64_t{1} << 40, int64_t{1} << 31, int64_t{1} << 62, -1, 1};
    d->fields.clear();
    AddField(*d, 1, WireType::kVarint).scalar = static_cast<uint64_t>(kValues[Below(std::size(kValues))]);
    return true;
  }

  bool InputRank() {
    Message* s = Pick(Kind::kShape);
    if (s == nullptr) return false;
    if (Below(2) == 0) Bury(s->fields);
    const size_t extra = std::vector<size_t>{1, 3, 40}[Below(3)];
    for (size_t n = 0; n < extra; ++n) {
      auto dim = std::make_shared<Message>();
      dim->kind = Kind::kDim;
      AddField(*dim, 1, WireType::kVarint).scalar = extra > 3 ? 1 : 1 + Below(2);
      AddField(*s, 1, WireType::kLengthDelimited).message = dim;
    }
    return true;
  }

  bool NodeDelete() {
    Message* g = Pick(Kind::kGraph);
    if (g == nullptr) return false;
    std::vector<size_t> at;
    for (size_t i = 0; i < g->fields.size(); ++i)
      if (g->fields[i].number == 1) at.push_back(i);
    if (at.empty()) return false;
    const auto it = g->fields.begin() + static_cast<std::ptrdiff_t>(at[Below(at.size())]);
    graveyard_.push_back(std::move(*it));
    g->fields.erase(it);
    return true;
  }

  bool NodeSwap() {
    Message* g = Pick(Kind::kGraph);
    if (g == nullptr) return false;
    auto nodes = FieldsOf(*g, 1);
    if (nodes.size() < 2) return false;
    std::swap(*nodes[Below(nodes.size())], *nodes[Below(nodes.size())]);
    return true;
  }

  bool NodeDuplicate() {
    Message* g = Pick(Kind::kGraph);
    if (g == nullptr) return false;
    Field* n = PickOf(FieldsOf(*g, 1));
    if (n == nullptr) return false;
    Field copy = *n;  // shares the message: the two stay identical, outputs assigned twice
    g->fields.push_back(copy);
    return true;
  }

  bool Opset() {
    static const int64_t kVersions[] = {-1, 0, 1, 5, 6, 7, 9, 11, 13, 17, 21, 25, 28, 29, 1000, INT32_MAX, INT64_MAX};
    Message* o = Pick(Kind::kOpset);
    if (o == nullptr) return false;
    auto fs = FieldsOf(*o, 2);
    Field& f = fs.empty() ? AddField(*o, 2, WireType::kVarint) : *fs[0];
    f.type = WireType::kVarint;
    f.scalar = static_cast<uint64_t>(kVersions[Below(std::size(kVersions))]);
    return true;
  }

  bool DuplicateOutput() {
    Message* a = Pick(Kind::kNode);
    Message* b = Pick(Kind::kNode);
    if (a == nullptr || b == nullptr) return false;
    Field* out = PickOf(Outputs(*a));
    auto other = Outputs(*b);
    if (out == nullptr || other.empty()) return false;
    SetString(*out, Below(4) == 0 ? std::string() : other[Below(other.size())]->bytes);
    return true;
  }

  bool ElemType() {
    Message* t = Pick(Kind::kTypeTensor);
    if (t == nullptr) return false;
    auto fs = FieldsOf(*t, 1);
    Field& f = fs.empty() ? AddField(*t, 1, WireType::kVarint) : *fs[0];
    f.type = WireType::kVarint;
    f.scalar = Below(28);
    return true;
  }

  // Removed fields stay alive here: by_kind_ may still point into them.
  void Bury(std::vector<Field>& fields) {
    for (Field& f : fields) graveyard_.push_back(std::move(f));
    fields.clear();
  }

  Message& model_;
  std::vector<Field> graveyard_;
  std::minstd_rand rng_;
  std::vector<Message*> by_kind_[16];
};

}  // namespace

std::optional<std::string> MutateModel(const uint8_t* data, size_t size, size_t max_size, uint32_t seed) {
  std::shared_ptr<Message> model;
  try {
    model = Parse(data, data + size, Kind::kModel, 0);
  } catch (const Error&) {
    return std::nullopt;
  }
  Mutator mutator(*model, seed);
  const int edits = 1 + static_cast<int>(seed % 3 == 0) + static_cast<int>(seed % 7 == 0);
  bool changed = false;
  for (int i = 0; i < edits; ++i) changed |= mutator.MutateOnce();
  if (!changed) return std::nullopt;
  std::string out;
  Serialize(*model, out);
  if (out.size() > max_size) return std::nullopt;
  return out;
}

}  // namespace onyx::fuzz
