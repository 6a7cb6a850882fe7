#include "session_binding.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <unordered_map>

#include "convert.h"
#include "explain_binding.h"
#include "onyx/session.h"
#include "value_object.h"

namespace nb = nanobind;
using onyx::IoInfo;
using onyx::TypeInfo;
using onyx::Value;

namespace onyx_python {
namespace {

class PySession {
 public:
  PySession(nb::handle model, const onyx::SessionOptions& options) {
    if (PyBytes_Check(model.ptr())) {
      const char* data = PyBytes_AS_STRING(model.ptr());
      const size_t size = static_cast<size_t>(PyBytes_GET_SIZE(model.ptr()));
      nb::gil_scoped_release unlocked;  // loading and optimizing can take a while
      session_ = std::make_unique<onyx::Session>(data, size, options);
    } else {
      const std::string path = nb::cast<std::string>(nb::str(model));
      nb::gil_scoped_release unlocked;
      session_ = std::make_unique<onyx::Session>(path, options);
    }
    for (const auto* list : {&session_->inputs(), &session_->overridable_initializers()})
      for (const IoInfo& io : *list) feed_types_[io.name] = io.type.get();
  }

  const onyx::Session& session() const { return *session_; }
  onyx::Session& session() { return *session_; }

  onyx::NamedValues Feeds(nb::dict feeds) const {
    onyx::NamedValues values;
    values.reserve(feeds.size());
    for (auto [key, obj] : feeds) {
      std::string name = nb::cast<std::string>(key);
      auto it = feed_types_.find(name);
      values.emplace_back(name, ValueFromPython(obj, it == feed_types_.end() ? nullptr : it->second, name));
    }
    return values;
  }

  std::vector<Value> Run(const onyx::NamedValues& feeds, const std::vector<std::string>& output_names,
                         const onyx::RunOptions* run_options) const {
    static const onyx::RunOptions kDefaults;
    nb::gil_scoped_release unlocked;
    return session_->Run(feeds, output_names, run_options ? *run_options : kDefaults);
  }

 private:
  std::unique_ptr<onyx::Session> session_;
  std::unordered_map<std::string, const TypeInfo*> feed_types_;
};

// NodeArg fields: (name, type string, shape with ints, dim names and None).
nb::list NodeArgs(const std::vector<IoInfo>& infos) {
  nb::list out;
  for (const IoInfo& io : infos) {
    nb::list shape;
    const TypeInfo* t = io.type.get();
    if (t && t->kind == TypeInfo::Kind::kOptional) t = t->elem.get();
    if (t && (t->kind == TypeInfo::Kind::kTensor || t->kind == TypeInfo::Kind::kSparseTensor) && t->shape) {
      for (const onyx::Dim& d : *t->shape) {
        if (d.known()) shape.append(d.value);
        else if (!d.param.empty()) shape.append(nb::str(d.param.c_str()));
        else shape.append(nb::none());
      }
    }
    out.append(nb::make_tuple(io.name, OrtTypeString(io.type.get()), shape));
  }
  return out;
}

nb::dict Metadata(const onyx::ModelMetadata& m) {
  nb::dict d;
  d["ir_version"] = m.ir_version;
  d["producer_name"] = m.producer_name;
  d["producer_version"] = m.producer_version;
  d["domain"] = m.domain;
  d["version"] = m.model_version;
  d["description"] = m.doc_string;
  d["graph_name"] = m.graph_name;
  d["opset_imports"] = m.opset_imports;
  d["custom_metadata_map"] = m.custom_metadata;
  return d;
}

}  // namespace

void BindSession(nb::module_& m) {
  nb::class_<PySession>(m, "Session")
      .def(nb::init<nb::handle, const onyx::SessionOptions&>(), nb::arg("model"), nb::arg("options"))
      .def_prop_ro("inputs", [](const PySession& s) { return NodeArgs(s.session().inputs()); })
      .def_prop_ro("outputs", [](const PySession& s) { return NodeArgs(s.session().outputs()); })
      .def_prop_ro("overridable_initializers",
                   [](const PySession& s) { return NodeArgs(s.session().overridable_initializers()); })
      .def_prop_ro("metadata", [](const PySession& s) { return Metadata(s.session().metadata()); })
      .def("fused_operator_statistics", [](const PySession& s) { return s.session().fused_operator_statistics(); })
      .def("providers", [](const PySession& s) { return s.session().providers(); })
      .def("end_profiling", [](PySession& s) { return s.session().EndProfiling(); })
      .def("profiling_start_time_ns", [](const PySession& s) { return s.session().profiling_start_time_ns(); })
      .def("explain", [](const PySession& s) { return ExplanationDict(onyx::Explain(s.session())); })
      // run: NumPy / lists / dicts in, the same out (ORT's InferenceSession.run).
      .def(
          "run",
          [](const PySession& s, const std::vector<std::string>& output_names, nb::dict feeds,
             const onyx::RunOptions* run_options) {
            const onyx::NamedValues values = s.Feeds(feeds);
            const std::vector<Value> results = s.Run(values, output_names, run_options);
            // The feeds are still alive here, so an output that aliases one is copied, not shared.
            nb::list out;
            for (const Value& v : results) out.append(PythonFromValue(v, &results));
            return out;
          },
          nb::arg("output_names"), nb::arg("feeds"), nb::arg("run_options").none())
      // run_with_ort_values: values in, _C.OrtValue out.
      .def(
          "run_values",
          [](const PySession& s, const std::vector<std::string>& output_names, nb::dict feeds,
             const onyx::RunOptions* run_options) {
            const onyx::NamedValues values = s.Feeds(feeds);
            return ToValueObjects(s.Run(values, output_names, run_options), {});
          },
          nb::arg("output_names"), nb::arg("feeds"), nb::arg("run_options").none())
      // IO binding: outputs with a preallocated value are written into it in place.
      .def(
          "run_bound",
          [](const PySession& s, nb::dict feeds, const std::vector<std::string>& output_names, nb::list preallocated,
             const onyx::RunOptions* run_options) {
            const onyx::NamedValues values = s.Feeds(feeds);
            std::vector<Value> outputs;
            for (nb::handle h : preallocated) {
              ValueObject* v = AsValueObject(h);
              outputs.push_back(v ? v->value : Value());
            }
            static const onyx::RunOptions kDefaults;
            std::vector<Value> results;
            {
              nb::gil_scoped_release unlocked;
              results = s.session().Run(values, output_names, outputs, run_options ? *run_options : kDefaults);
            }
            return ToValueObjects(std::move(results), outputs);
          },
          nb::arg("feeds"), nb::arg("output_names"), nb::arg("preallocated"), nb::arg("run_options").none());
}

}  // namespace onyx_python
