#include "trace_reader.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/check.h"

namespace onyx::cli {
namespace {

using nlohmann::json;

// Byte counts are strings in both writers ("602112"); tolerate numbers too.
int64_t ByteCount(const json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return -1;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_string()) {
    try {
      return std::stoll(it->get<std::string>());
    } catch (...) {
      return -1;
    }
  }
  return -1;
}

// [{"float": [1, 3, 224, 224]}, ...]
std::vector<TensorShape> Shapes(const json& args, const char* key) {
  std::vector<TensorShape> shapes;
  auto it = args.find(key);
  if (it == args.end() || !it->is_array()) return shapes;
  for (const json& entry : *it) {
    if (!entry.is_object() || entry.empty()) continue;
    TensorShape shape;
    shape.type = entry.begin().key();
    if (entry.begin()->is_array())
      for (const json& d : *entry.begin()) shape.dims.push_back(d.is_number_integer() ? d.get<int64_t>() : -1);
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

int64_t IntField(const json& e, const char* key) {
  auto it = e.find(key);
  if (it == e.end()) return 0;
  if (it->is_number()) return it->get<int64_t>();
  if (it->is_string()) {
    try {
      return std::stoll(it->get<std::string>());
    } catch (...) {
    }
  }
  return 0;
}

}  // namespace

bool IsKernelEvent(const TraceEvent& e) {
  static const std::string kSuffix = "_kernel_time";
  return e.cat == "Node" && e.name.size() > kSuffix.size() &&
         e.name.compare(e.name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

std::vector<TraceEvent> ReadTrace(const std::string& path) {
  std::ifstream in(path);
  ONYX_CHECK(in.good(), kNoSuchFile, "cannot open profile '", path, "'");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const std::exception& e) {
    ONYX_THROW(kInvalidArgument, "profile '", path, "' is not JSON: ", e.what());
  }
  if (doc.is_object() && doc.contains("traceEvents")) doc = doc["traceEvents"];
  ONYX_CHECK(doc.is_array(), kInvalidArgument, "profile '", path,
             "' is not a Chrome trace (a JSON array of events, or {\"traceEvents\": [...]})");
  std::vector<TraceEvent> events;
  for (const json& e : doc) {
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    TraceEvent ev;
    ev.cat = e.value("cat", "");
    ev.name = e.value("name", "");
    ev.ts = IntField(e, "ts");
    ev.dur = IntField(e, "dur");
    ev.pid = IntField(e, "pid");
    ev.tid = IntField(e, "tid");
    if (IsKernelEvent(ev)) {
      ev.node = ev.name.substr(0, ev.name.size() - std::string("_kernel_time").size());
      const json args = e.value("args", json::object());
      ev.op = args.value("op_name", "");
      ev.provider = args.value("provider", "");
      if (args.contains("kernel") && args["kernel"].is_string()) ev.kernel = args["kernel"].get<std::string>();
      ev.activation_bytes = ByteCount(args, "activation_size");
      ev.parameter_bytes = ByteCount(args, "parameter_size");
      ev.output_bytes = ByteCount(args, "output_size");
      ev.inputs = Shapes(args, "input_type_shape");
      ev.outputs = Shapes(args, "output_type_shape");
      auto stats = args.find("thread_scheduling_stats");
      if (stats != args.end() && stats->is_object() && stats->contains("main_thread")) {
        const json& main = (*stats)["main_thread"];
        if (main.is_object() && main.contains("num_threads") && main["num_threads"].is_number_integer())
          ev.threads = main["num_threads"].get<int>();
      }
    }
    events.push_back(std::move(ev));
  }
  return events;
}

}  // namespace onyx::cli
