#include "onnx/proto_decode.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>

#include "base/check.h"
#include "base/float_types.h"
#include "tensor/small_page_allocator.h"

namespace onyx::proto {
namespace {

namespace fs = std::filesystem;

struct RawTensorFields {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  std::string name;
  bool has_raw = false;
  std::string_view raw;
  std::vector<float> float_data;
  std::vector<int64_t> int32_data;  // int32 values, widened while reading
  std::vector<std::string> string_data;
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;
  std::map<std::string, std::string> external;
  bool external_location = false;
};

std::string TensorLabel(const RawTensorFields& f) {
  return f.name.empty() ? std::string("a tensor") : StrCat("tensor '", f.name, "'");
}

// Bytes of `count` elements must fit the declared shape.
void CheckByteCount(const RawTensorFields& f, DataType dt, int64_t count, size_t have, const DecodeContext& ctx) {
  const int64_t want = StorageBytes(dt, count);
  ONYX_CHECK(static_cast<int64_t>(have) == want, kInvalidModel, ctx.source, ": ", TensorLabel(f), " of type ",
             DataTypeName(dt), " and shape ", ShapeToString(f.dims), " needs ", want, " bytes of data but has ", have);
}

size_t ElementAlignment(DataType dt) {
  const int bits = DataTypeBits(dt);
  if (bits <= 8) return 1;
  return std::min<size_t>(8, static_cast<size_t>(bits / 8));
}

// Copied bytes of mapped files between calls of DecodeContext::release_read_pages.
constexpr size_t kCopiedBytesPerRelease = size_t{64} << 20;

// A tensor over `bytes` that stay alive through `holder`, or a copy when they are misaligned.
// The copy is on small pages: most copies are weights that kernels pack and the session then
// drops, and a fresh huge page costs far more to fault in on a VM (base/aligned_memory.h).
Tensor ViewOrCopy(DataType dt, const Shape& shape, const uint8_t* bytes, std::shared_ptr<const void> holder,
                  DecodeContext& ctx) {
  if (holder && reinterpret_cast<uintptr_t>(bytes) % ElementAlignment(dt) == 0) {
    return Tensor::View(dt, shape, const_cast<uint8_t*>(bytes), std::const_pointer_cast<void>(holder));
  }
  Tensor t(dt, shape, CpuSmallPageAllocator());
  if (t.byte_size() > 0) std::memcpy(t.raw_data(), bytes, static_cast<size_t>(t.byte_size()));
  ctx.copied_since_release += static_cast<size_t>(t.byte_size());
  if (ctx.release_read_pages && ctx.copied_since_release >= kCopiedBytesPerRelease) {
    ctx.release_read_pages();
    ctx.copied_since_release = 0;
  }
  return t;
}

std::shared_ptr<const MappedFile> OpenExternal(const RawTensorFields& f, const std::string& location, DecodeContext& ctx) {
  ONYX_CHECK(!ctx.base_dir.empty(), kInvalidModel, ctx.source, ": ", TensorLabel(f),
             " uses external data, which needs a model loaded from a file");
  const fs::path rel(location);
  ONYX_CHECK(!location.empty() && rel.is_relative(), kInvalidModel, ctx.source, ": external data location '", location,
             "' of ", TensorLabel(f), " must be a path relative to the model's folder");
  if (const auto known = ctx.external_by_location.find(location); known != ctx.external_by_location.end())
    return known->second;
  const fs::path base = fs::weakly_canonical(fs::path(ctx.base_dir));
  const fs::path full = fs::weakly_canonical(base / rel);
  auto [mismatch, unused] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  ONYX_CHECK(mismatch == base.end(), kInvalidModel, ctx.source, ": external data location '", location, "' of ",
             TensorLabel(f), " escapes the model's folder");
  auto it = ctx.external_files.find(full.string());
  if (it != ctx.external_files.end()) return ctx.external_by_location[location] = it->second;
  std::shared_ptr<const MappedFile> file;
  try {
    file = MappedFile::Open(full.string());
  } catch (const Error& e) {  // same code (kNoSuchFile for a missing file), naming model and tensor
    throw Error(e.code(), StrCat(ctx.source, ": external data of ", TensorLabel(f), ": ", e.what()));
  }
  ctx.external_files[full.string()] = file;
  ctx.external_by_location[location] = file;
  return file;
}

Tensor FromExternal(const RawTensorFields& f, DataType dt, const Shape& shape, DecodeContext& ctx) {
  auto loc = f.external.find("location");
  ONYX_CHECK(loc != f.external.end(), kInvalidModel, ctx.source, ": ", TensorLabel(f),
             " is marked external but has no 'location'");
  auto file = OpenExternal(f, loc->second, ctx);
  auto parse_number = [&](const char* key, int64_t fallback) -> int64_t {
    auto it = f.external.find(key);
    if (it == f.external.end()) return fallback;
    try {
      size_t used = 0;
      const long long v = std::stoll(it->second, &used);
      if (used == it->second.size() && v >= 0) return v;
    } catch (...) {
    }
    ONYX_THROW(kInvalidModel, ctx.source, ": external data ", key, " '", it->second, "' of ", TensorLabel(f),
               " is not a non-negative integer");
  };
  const int64_t offset = parse_number("offset", 0);
  const int64_t want = StorageBytes(dt, ShapeSize(shape));
  const int64_t length = parse_number("length", want);
  ONYX_CHECK(length == want, kInvalidModel, ctx.source, ": external data of ", TensorLabel(f), " has length ", length,
             " but its type and shape need ", want, " bytes");
  ONYX_CHECK(offset <= static_cast<int64_t>(file->size()) && length <= static_cast<int64_t>(file->size()) - offset,
             kInvalidModel, ctx.source, ": external data of ", TensorLabel(f), " (offset ", offset, ", length ", length,
             ") runs past the end of '", file->path(), "' (", file->size(), " bytes)");
  return ViewOrCopy(dt, shape, file->data() + offset, file, ctx);
}

template <typename Dst, typename Src, typename Fn>
void FillFrom(Tensor& t, const std::vector<Src>& src, Fn convert) {
  auto* dst = t.data<Dst>();
  for (size_t i = 0; i < src.size(); ++i) dst[i] = convert(src[i]);
}

// Typed (non-raw) storage: one field per family of types.
// How many values dt's typed field holds, and how many the shape needs (n elements).
std::pair<size_t, int64_t> TypedFieldCount(const RawTensorFields& f, DataType dt, int64_t n) {
  const int64_t twice = n > INT64_MAX / 2 ? INT64_MAX : 2 * n;
  switch (dt) {
    case DataType::kFloat: return {f.float_data.size(), n};
    case DataType::kComplex64: return {f.float_data.size(), twice};
    case DataType::kDouble: return {f.double_data.size(), n};
    case DataType::kComplex128: return {f.double_data.size(), twice};
    case DataType::kInt64: return {f.int64_data.size(), n};
    case DataType::kUInt64:
    case DataType::kUInt32: return {f.uint64_data.size(), n};
    case DataType::kString: return {f.string_data.size(), n};
    case DataType::kInt4:
    case DataType::kUInt4:
    case DataType::kFloat4E2M1:
    case DataType::kInt2:
    case DataType::kUInt2: return {f.int32_data.size(), StorageBytes(dt, n)};
    default: return {f.int32_data.size(), n};  // the other types ride in int32_data, one value each
  }
}

Tensor FromTypedFields(const RawTensorFields& f, DataType dt, const Shape& shape, const DecodeContext& ctx) {
  const int64_t n = ShapeSize(shape);
  auto check_count = [&](size_t have, int64_t want) {
    ONYX_CHECK(static_cast<int64_t>(have) == want, kInvalidModel, ctx.source, ": ", TensorLabel(f), " of type ",
               DataTypeName(dt), " and shape ", ShapeToString(shape), " needs ", want, " values but has ", have);
  };
  // Counted before allocating: a few bytes of dims must not make the reader allocate gigabytes.
  const auto [have, want] = TypedFieldCount(f, dt, n);
  check_count(have, want);
  Tensor t(dt, shape);
  switch (dt) {
    case DataType::kFloat:
      check_count(f.float_data.size(), n);
      FillFrom<float>(t, f.float_data, [](float v) { return v; });
      break;
    case DataType::kComplex64:
      check_count(f.float_data.size(), 2 * n);
      FillFrom<float>(t, f.float_data, [](float v) { return v; });
      break;
    case DataType::kDouble:
      check_count(f.double_data.size(), n);
      FillFrom<double>(t, f.double_data, [](double v) { return v; });
      break;
    case DataType::kComplex128:
      check_count(f.double_data.size(), 2 * n);
      FillFrom<double>(t, f.double_data, [](double v) { return v; });
      break;
    case DataType::kInt64:
      check_count(f.int64_data.size(), n);
      FillFrom<int64_t>(t, f.int64_data, [](int64_t v) { return v; });
      break;
    case DataType::kUInt64:
      check_count(f.uint64_data.size(), n);
      FillFrom<uint64_t>(t, f.uint64_data, [](uint64_t v) { return v; });
      break;
    case DataType::kUInt32:
      check_count(f.uint64_data.size(), n);
      FillFrom<uint32_t>(t, f.uint64_data, [](uint64_t v) { return static_cast<uint32_t>(v); });
      break;
    case DataType::kInt32:
      check_count(f.int32_data.size(), n);
      FillFrom<int32_t>(t, f.int32_data, [](int64_t v) { return static_cast<int32_t>(v); });
      break;
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      check_count(f.int32_data.size(), n);
      FillFrom<uint16_t>(t, f.int32_data, [](int64_t v) { return static_cast<uint16_t>(v); });
      break;
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kBool:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
      check_count(f.int32_data.size(), n);
      FillFrom<uint8_t>(t, f.int32_data, [](int64_t v) { return static_cast<uint8_t>(v); });
      break;
    case DataType::kInt4:
    case DataType::kUInt4:
    case DataType::kFloat4E2M1:
    case DataType::kInt2:
    case DataType::kUInt2:
      // Already packed: each int32 carries one byte.
      check_count(f.int32_data.size(), StorageBytes(dt, n));
      FillFrom<uint8_t>(t, f.int32_data, [](int64_t v) { return static_cast<uint8_t>(v); });
      break;
    case DataType::kString:
      check_count(f.string_data.size(), n);
      for (int64_t i = 0; i < n; ++i) t.data<std::string>()[i] = f.string_data[i];
      break;
    default:
      ONYX_THROW(kInvalidModel, ctx.source, ": ", TensorLabel(f), " has unsupported type ", DataTypeName(dt));
  }
  return t;
}

RawTensorFields ReadTensorFields(WireReader& r) {
  RawTensorFields f;
  while (r.Next()) {
    switch (r.field()) {
      case 1: r.ReadRepeatedInt64(f.dims); break;
      case 2: f.data_type = r.ReadInt32(); break;
      case 4: r.ReadRepeatedFloat(f.float_data); break;
      case 5: r.ReadRepeatedInt64(f.int32_data); break;
      case 6: f.string_data.emplace_back(r.ReadBytes()); break;
      case 7: r.ReadRepeatedInt64(f.int64_data); break;
      case 8: f.name = r.ReadString(); break;
      case 9: f.has_raw = true; f.raw = r.ReadBytes(); break;
      case 10: r.ReadRepeatedDouble(f.double_data); break;
      case 11: r.ReadRepeatedUInt64(f.uint64_data); break;
      case 13: {
        WireReader e = r.ReadMessage(r.what());
        std::string key, value;
        while (e.Next()) {
          if (e.field() == 1) key = e.ReadString();
          else if (e.field() == 2) value = e.ReadString();
          else e.Skip();
        }
        f.external[key] = value;
        break;
      }
      case 14: f.external_location = r.ReadInt32() == 1; break;
      default: r.Skip();
    }
  }
  return f;
}

constexpr int kMaxNesting = 64;

}  // namespace

Tensor DecodeTensor(WireReader r, DecodeContext& ctx) {
  RawTensorFields f = ReadTensorFields(r);
  ONYX_CHECK(IsValidDataType(f.data_type), kInvalidModel, ctx.source, ": ", TensorLabel(f), " has invalid data type ",
             f.data_type);
  const auto dt = static_cast<DataType>(f.data_type);
  for (int64_t d : f.dims)
    ONYX_CHECK(d >= 0, kInvalidModel, ctx.source, ": ", TensorLabel(f), " has negative dimension in ", ShapeToString(f.dims));
  Shape shape = f.dims;
  int64_t n;
  try {
    n = ShapeSize(shape);
  } catch (const Error&) {
    ONYX_THROW(kInvalidModel, ctx.source, ": ", TensorLabel(f), " has too many elements: ", ShapeToString(shape));
  }
  if (f.external_location || !f.external.empty()) {
    ONYX_CHECK(dt != DataType::kString, kInvalidModel, ctx.source, ": string ", TensorLabel(f), " cannot be external");
    return FromExternal(f, dt, shape, ctx);
  }
  if (f.has_raw && dt != DataType::kString) {
    CheckByteCount(f, dt, n, f.raw.size(), ctx);
    return ViewOrCopy(dt, shape, reinterpret_cast<const uint8_t*>(f.raw.data()), ctx.bytes_holder, ctx);
  }
  // A tensor with no data at all is valid only when it has no elements.
  return FromTypedFields(f, dt, shape, ctx);
}

Tensor DecodeSparseTensor(WireReader r, DecodeContext& ctx) {
  Tensor values, indices;
  std::vector<int64_t> dims;
  while (r.Next()) {
    switch (r.field()) {
      case 1: values = DecodeTensor(r.ReadMessage(r.what()), ctx); break;
      case 2: indices = DecodeTensor(r.ReadMessage(r.what()), ctx); break;
      case 3: r.ReadRepeatedInt64(dims); break;
      default: r.Skip();
    }
  }
  ONYX_CHECK(values.defined() && values.rank() == 1, kInvalidModel, ctx.source, ": sparse tensor without 1-D values");
  ONYX_CHECK(indices.defined() && indices.dtype() == DataType::kInt64, kInvalidModel, ctx.source,
             ": sparse tensor indices must be int64");
  ONYX_CHECK(values.dtype() != DataType::kString && !IsSubByte(values.dtype()), kInvalidModel, ctx.source,
             ": sparse tensors of type ", DataTypeName(values.dtype()), " are not supported");
  Tensor dense = Tensor::Zeros(values.dtype(), dims);
  const int64_t nnz = values.size();
  const size_t esize = static_cast<size_t>(DataTypeBits(values.dtype()) / 8);
  const auto* idx = indices.data<int64_t>();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const bool linear = indices.rank() == 1;
  ONYX_CHECK(linear ? indices.size() == nnz : (indices.rank() == 2 && indices.dim(0) == nnz && indices.dim(1) == rank),
             kInvalidModel, ctx.source, ": sparse tensor indices ", indices.Describe(), " do not match ", nnz,
             " values of rank ", rank);
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t offset = 0;
    if (linear) {
      offset = idx[k];
    } else {
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t i = idx[k * rank + d];
        ONYX_CHECK(i >= 0 && i < dims[d], kInvalidModel, ctx.source, ": sparse index out of range");
        offset = offset * dims[d] + i;
      }
    }
    ONYX_CHECK(offset >= 0 && offset < dense.size(), kInvalidModel, ctx.source, ": sparse index ", offset,
               " out of range for shape ", ShapeToString(dims));
    std::memcpy(static_cast<uint8_t*>(dense.raw_data()) + offset * esize,
                static_cast<const uint8_t*>(values.raw_data()) + k * esize, esize);
  }
  return dense;
}

std::shared_ptr<const TypeInfo> DecodeType(WireReader r, DecodeContext& ctx) {
  ONYX_CHECK(++ctx.depth < kMaxNesting, kInvalidModel, ctx.source, ": types nested too deeply");
  std::shared_ptr<const TypeInfo> result = std::make_shared<TypeInfo>();
  auto read_tensor_type = [&](WireReader t, TypeInfo::Kind kind) {
    auto info = std::make_shared<TypeInfo>();
    info->kind = kind;
    while (t.Next()) {
      if (t.field() == 1) {
        info->elem_type = static_cast<DataType>(t.ReadInt32());
      } else if (t.field() == 2) {
        std::vector<Dim> dims;
        WireReader shape = t.ReadMessage(t.what());
        while (shape.Next()) {
          if (shape.field() != 1) { shape.Skip(); continue; }
          Dim d;
          WireReader dim = shape.ReadMessage(t.what());
          while (dim.Next()) {
            if (dim.field() == 1) d.value = dim.ReadInt64();
            else if (dim.field() == 2) d.param = dim.ReadString();
            else dim.Skip();
          }
          dims.push_back(d);
        }
        info->shape = std::move(dims);
      } else {
        t.Skip();
      }
    }
    return info;
  };
  while (r.Next()) {
    switch (r.field()) {
      case 1: result = read_tensor_type(r.ReadMessage(r.what()), TypeInfo::Kind::kTensor); break;
      case 8: result = read_tensor_type(r.ReadMessage(r.what()), TypeInfo::Kind::kSparseTensor); break;
      case 4:
      case 9: {  // sequence / optional: one nested TypeProto at field 1
        WireReader inner = r.ReadMessage(r.what());
        std::shared_ptr<const TypeInfo> elem;
        while (inner.Next()) {
          if (inner.field() == 1) elem = DecodeType(inner.ReadMessage(r.what()), ctx);
          else inner.Skip();
        }
        result = r.field() == 4 ? TypeInfo::Sequence(elem) : TypeInfo::Optional(elem);
        break;
      }
      case 5: {
        WireReader inner = r.ReadMessage(r.what());
        DataType key = DataType::kUndefined;
        std::shared_ptr<const TypeInfo> value;
        while (inner.Next()) {
          if (inner.field() == 1) key = static_cast<DataType>(inner.ReadInt32());
          else if (inner.field() == 2) value = DecodeType(inner.ReadMessage(r.what()), ctx);
          else inner.Skip();
        }
        result = TypeInfo::Map(key, value);
        break;
      }
      default: r.Skip();
    }
  }
  --ctx.depth;
  return result;
}

namespace {

// SequenceProto.elem_type / OptionalProto.elem_type numbering.
enum ProtoElemType { kElemTensor = 1, kElemSparse = 2, kElemSequence = 3, kElemMap = 4, kElemOptional = 5 };

std::shared_ptr<const TypeInfo> TypeOfValue(const Value& v) {
  if (v.is_tensor()) return TypeInfo::Tensor(v.tensor().dtype());
  if (v.is_sequence()) return TypeInfo::Sequence(v.type());
  if (v.is_map()) return TypeInfo::Map(v.map_keys().dtype(), TypeInfo::Tensor(v.map_values().dtype()));
  return v.type();
}

}  // namespace

Value DecodeSequence(WireReader r, DecodeContext& ctx) {
  ONYX_CHECK(++ctx.depth < kMaxNesting, kInvalidModel, ctx.source, ": values nested too deeply");
  std::vector<Value> elements;
  int32_t elem_type = 0;
  while (r.Next()) {
    switch (r.field()) {
      case 2: elem_type = r.ReadInt32(); break;
      case 3: elements.emplace_back(DecodeTensor(r.ReadMessage(r.what()), ctx)); break;
      case 4: elements.emplace_back(DecodeSparseTensor(r.ReadMessage(r.what()), ctx)); break;
      case 5: elements.push_back(DecodeSequence(r.ReadMessage(r.what()), ctx)); break;
      case 6: elements.push_back(DecodeMap(r.ReadMessage(r.what()), ctx)); break;
      case 7: elements.push_back(DecodeOptional(r.ReadMessage(r.what()), ctx)); break;
      default: r.Skip();
    }
  }
  --ctx.depth;
  std::shared_ptr<const TypeInfo> elem;
  if (!elements.empty()) elem = TypeOfValue(elements.front());
  else if (elem_type == kElemTensor) elem = TypeInfo::Tensor(DataType::kUndefined);
  return Value::Sequence(std::move(elements), elem);
}

Value DecodeMap(WireReader r, DecodeContext& ctx) {
  int32_t key_type = 0;
  std::vector<int64_t> keys;
  std::vector<std::string> string_keys;
  Value values;
  while (r.Next()) {
    switch (r.field()) {
      case 2: key_type = r.ReadInt32(); break;
      case 3: r.ReadRepeatedInt64(keys); break;
      case 4: string_keys.emplace_back(r.ReadBytes()); break;
      case 5: values = DecodeSequence(r.ReadMessage(r.what()), ctx); break;
      default: r.Skip();
    }
  }
  Tensor key_tensor;
  if (key_type == static_cast<int32_t>(DataType::kString)) {
    key_tensor = Tensor(DataType::kString, {static_cast<int64_t>(string_keys.size())});
    for (size_t i = 0; i < string_keys.size(); ++i) key_tensor.data<std::string>()[i] = string_keys[i];
  } else {
    key_tensor = Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(keys.size())}, keys);
  }
  ONYX_CHECK(values.is_sequence(), kInvalidModel, ctx.source, ": map without values");
  // Map values in test data are scalars or 1-element tensors: gather them into one 1-D tensor.
  const auto& elems = values.sequence();
  ONYX_CHECK(static_cast<int64_t>(elems.size()) == key_tensor.size(), kInvalidModel, ctx.source,
             ": map has ", key_tensor.size(), " keys but ", elems.size(), " values");
  DataType vt = elems.empty() ? DataType::kFloat : elems.front().tensor().dtype();
  Tensor value_tensor(vt, {static_cast<int64_t>(elems.size())});
  const size_t esize = static_cast<size_t>(DataTypeBits(vt) / 8);
  for (size_t i = 0; i < elems.size(); ++i) {
    const Tensor& e = elems[i].tensor();
    ONYX_CHECK(e.size() == 1 && e.dtype() == vt, kInvalidModel, ctx.source,
               ": map values must be scalars of one type");
    if (vt == DataType::kString) {  // map(int64, string) and map(string, string) of ai.onnx.ml
      value_tensor.data<std::string>()[i] = e.data<std::string>()[0];
      continue;
    }
    std::memcpy(static_cast<uint8_t*>(value_tensor.raw_data()) + i * esize, e.raw_data(), esize);
  }
  return Value::Map(std::move(key_tensor), std::move(value_tensor));
}

Value DecodeOptional(WireReader r, DecodeContext& ctx) {
  ONYX_CHECK(++ctx.depth < kMaxNesting, kInvalidModel, ctx.source, ": values nested too deeply");
  Value result;
  int32_t elem_type = 0;
  while (r.Next()) {
    switch (r.field()) {
      case 2: elem_type = r.ReadInt32(); break;
      case 3: result = DecodeTensor(r.ReadMessage(r.what()), ctx); break;
      case 4: result = DecodeSparseTensor(r.ReadMessage(r.what()), ctx); break;
      case 5: result = DecodeSequence(r.ReadMessage(r.what()), ctx); break;
      case 6: result = DecodeMap(r.ReadMessage(r.what()), ctx); break;
      case 7: result = DecodeOptional(r.ReadMessage(r.what()), ctx); break;
      default: r.Skip();
    }
  }
  --ctx.depth;
  if (result.is_none()) {
    std::shared_ptr<const TypeInfo> type;
    if (elem_type == kElemTensor) type = TypeInfo::Tensor(DataType::kUndefined);
    if (elem_type == kElemSequence) type = TypeInfo::Sequence(nullptr);
    return Value::None(type);
  }
  return result;
}

Value ReadValueFile(const std::string& path, const TypeInfo* type) {
  auto file = MappedFile::Open(path);
  DecodeContext ctx;
  ctx.source = path;
  ctx.base_dir = fs::path(path).parent_path().string();
  ctx.bytes_holder = file;
  WireReader r(file->data(), file->data() + file->size(), path);
  const auto kind = type ? type->kind : TypeInfo::Kind::kTensor;
  switch (kind) {
    case TypeInfo::Kind::kSequence: return DecodeSequence(r, ctx);
    case TypeInfo::Kind::kMap: return DecodeMap(r, ctx);
    case TypeInfo::Kind::kOptional: return DecodeOptional(r, ctx);
    default: return DecodeTensor(r, ctx);
  }
}

}  // namespace onyx::proto
