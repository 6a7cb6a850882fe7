#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "onyx/session.h"
#include "onyx/threading.h"
#include "session_binding.h"
#include "value_object.h"

namespace nb = nanobind;

namespace onyx_python {

void BindOptions(nb::module_& m) {
  using SO = onyx::SessionOptions;
  // Plain fields, set by onyx.SessionOptions when a session is made; enums travel as ORT's ints.
  nb::class_<SO>(m, "SessionOptions")
      .def(nb::init<>())
      .def_prop_rw(
          "graph_optimization_level", [](const SO& o) { return static_cast<int>(o.graph_optimization_level); },
          [](SO& o, int v) { o.graph_optimization_level = static_cast<onyx::GraphOptimizationLevel>(v); })
      .def_prop_rw(
          "execution_mode", [](const SO& o) { return static_cast<int>(o.execution_mode); },
          [](SO& o, int v) { o.execution_mode = static_cast<onyx::ExecutionMode>(v); })
      .def_rw("optimized_model_filepath", &SO::optimized_model_filepath)
      .def_rw("intra_op_num_threads", &SO::intra_op_num_threads)
      .def_rw("inter_op_num_threads", &SO::inter_op_num_threads)
      .def_rw("use_global_thread_pool", &SO::use_global_thread_pool)
      .def_rw("enable_cpu_mem_arena", &SO::enable_cpu_mem_arena)
      .def_rw("execution_providers", &SO::execution_providers)
      .def_rw("provider_options", &SO::provider_options)
      .def_rw("config_entries", &SO::config_entries)
      .def_rw("enable_mem_pattern", &SO::enable_mem_pattern)
      .def_rw("enable_mem_reuse", &SO::enable_mem_reuse)
      .def_rw("enable_profiling", &SO::enable_profiling)
      .def_rw("profile_file_prefix", &SO::profile_file_prefix)
      .def_rw("log_severity_level", &SO::log_severity_level)
      .def_rw("log_verbosity_level", &SO::log_verbosity_level)
      .def_rw("logid", &SO::logid)
      .def_rw("use_deterministic_compute", &SO::use_deterministic_compute)
      .def_rw("free_dimension_overrides_by_name", &SO::free_dimension_overrides_by_name)
      .def("add_initializer", [](SO& o, const std::string& name, const ValueObject& v) {
        // The tensor keeps the caller's array alive: the session reads its bytes, no copy.
        o.initializers.emplace_back(name, v.value.tensor());
      });

  using RO = onyx::RunOptions;
  nb::class_<RO>(m, "RunOptions")
      .def(nb::init<>())
      .def_rw("logid", &RO::run_tag)
      .def_rw("log_severity_level", &RO::log_severity_level)
      .def_rw("log_verbosity_level", &RO::log_verbosity_level)
      .def_rw("shrink_arena_after_run", &RO::shrink_arena_after_run)
      // Shared with the running Run: setting it from another thread stops that Run.
      .def_prop_rw(
          "terminate", [](const RO& o) { return o.terminate->load(); },
          [](RO& o, bool v) { o.terminate->store(v); });

  m.def("available_providers", &onyx::AvailableProviders);
  m.def("provider_unavailable_reason", &onyx::ProviderUnavailableReason);
  m.def("check_provider_options", &onyx::CheckProviderOptions);
  m.def(
      "set_global_thread_pools",
      [](int intra, int inter, bool allow_spinning) {
        onyx::ThreadingOptions t;
        t.intra_op_num_threads = intra;
        t.inter_op_num_threads = inter;
        t.allow_spinning = allow_spinning;
        onyx::SetGlobalThreadPools(t);
      },
      nb::arg("intra_op_num_threads"), nb::arg("inter_op_num_threads"), nb::arg("allow_spinning") = true);
  m.def("has_global_thread_pools", &onyx::HasGlobalThreadPools);
}

}  // namespace onyx_python
