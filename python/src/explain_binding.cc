#include "explain_binding.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace onyx_python {

nb::dict ExplanationDict(const onyx::Explanation& e) {
  nb::dict d;
  d["model"] = e.model;
  d["level"] = e.level;
  d["providers"] = e.providers;
  d["notes"] = e.notes;
  nb::list nodes;
  for (const auto& n : e.nodes) {
    nb::dict node;
    node["name"] = n.name;
    node["op"] = n.op;
    node["domain"] = n.domain;
    node["provider"] = n.provider;
    nb::dict declined;
    for (const auto& [provider, why] : n.declined) declined[provider.c_str()] = why;
    node["declined"] = declined;
    node["replaces"] = n.replaces;
    node["created_by"] = n.created_by;
    node["rewritten_by"] = n.rewritten_by;
    node["kernel"] = n.kernel;
    nodes.append(node);
  }
  d["nodes"] = nodes;
  nb::dict removed;
  for (const auto& [name, why] : e.removed) removed[name.c_str()] = why;
  d["removed"] = removed;
  nb::list misses;
  for (const auto& m : e.fusion_misses) {
    nb::dict miss;
    miss["pattern"] = m.pattern;
    miss["nodes"] = m.nodes;
    miss["reason"] = m.reason;
    misses.append(miss);
  }
  d["fusion_misses"] = misses;
  return d;
}

}  // namespace onyx_python
