#include "runtime/session_impl.h"

#include <filesystem>
#include <optional>
#include <unordered_map>

#include "base/check.h"
#include "onnx/model_loader.h"
#include "onnx/model_writer.h"
#include "platform/mapped_file.h"
#include "platform/timer.h"
#include "runtime/creation_cache.h"
#include "runtime/output_binding.h"
#include "runtime/run_memory.h"
#include "runtime/session_logging.h"
#include "runtime/session_options_apply.h"
#include "runtime/deferred_widenings.h"
#include "runtime/small_page_packs.h"

namespace onyx {

namespace {

// "CUDAExecutionProvider" -> "CUDA".
std::string ShortProviderName(const std::string& name) {
  const std::string suffix = "ExecutionProvider";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return name.substr(0, name.size() - suffix.size());
  return name;
}

// The options given for provider `name` (by its short or ONNX Runtime name).
ProviderOptions OptionsOf(const SessionOptions& options, const std::string& name) {
  ProviderOptions found;
  for (const auto& [provider, values] : options.provider_options)
    if (ShortProviderName(provider) == name) found.insert(values.begin(), values.end());
  return found;
}

std::unique_ptr<ExecutionProvider> MakeProvider(const std::string& given, const SessionOptions& options) {
  const std::string name = ShortProviderName(given);
  const ProviderOptions provider_options = OptionsOf(options, name);
  if (name == "CPU") {
    ONYX_CHECK(provider_options.empty(), kInvalidArgument, "CPUExecutionProvider options ",
               StrJoin([&] {
                 std::vector<std::string> keys;
                 for (const auto& kv : provider_options) keys.push_back(kv.first);
                 return keys;
               }()),
               ": Onyx's CPU provider takes none (the arena and threads are SessionOptions: enable_cpu_mem_arena, "
               "intra_op_num_threads, ...)");
    return MakeCpuProvider();
  }
  const ProviderFactory* factory = FindProviderFactory(name);
  if (factory == nullptr) {
    std::vector<std::string> available;
    for (const auto& p : AvailableProviders()) available.push_back(ShortProviderName(p));
    ONYX_THROW(kInvalidArgument, "unknown execution provider '", given, "' (available in this build: ",
               StrJoin(available), ")");
  }
  return factory->make(provider_options, options.placement_only);
}

void CheckProviderOptionsNames(const SessionOptions& options) {
  for (const auto& [provider, values] : options.provider_options) {
    bool used = false;
    for (const auto& name : options.execution_providers)
      used = used || ShortProviderName(name) == ShortProviderName(provider);
    used = used || ShortProviderName(provider) == "CPU";
    ONYX_CHECK(used, kInvalidArgument, "provider_options are given for '", provider,
               "', which is not in execution_providers (", StrJoin(options.execution_providers), ")");
  }
}

std::string DescribeType(const std::shared_ptr<const TypeInfo>& type) { return type ? type->ToString() : "unknown"; }

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  for (char c : text + ",") {
    if (c == ',') {
      const auto b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
      if (b != std::string::npos) items.push_back(item.substr(b, e - b + 1));
      item.clear();
    } else {
      item += c;
    }
  }
  return items;
}

void CheckConfigKeys(const std::map<std::string, std::string>& entries) {
  for (const auto& [key, value] : entries) {
    const bool known = key == kConfigDisableOptimizers || key == kConfigExternalInitializersFile ||
                       key == kConfigCreationCacheDir || key == kConfigCreationCacheKey ||
                       key == kConfigExternalInitializersMinSize || IsThreadingConfigKey(key) ||
                       IsLoadLimitsConfigKey(key) || IsRunLimitsConfigKey(key) || key == kConfigPacksOnSmallPages ||
                       key == kConfigX64QuantPrecision;
    ONYX_CHECK(known, kInvalidArgument, "unknown session config entry '", key, "'");
    ONYX_CHECK(key != kConfigX64QuantPrecision || value == "0" || value == "1", kInvalidArgument, key,
               " must be '0' or '1', got '", value, "'");
  }
  PackPlacementFromConfig(entries);  // a bad value fails before the optimizer runs
  if (const auto it = entries.find(kConfigCreationCacheKey); it != entries.end()) {
    ONYX_CHECK(entries.count(kConfigCreationCacheDir), kInvalidArgument, kConfigCreationCacheKey, " needs ",
               kConfigCreationCacheDir, " (the cache's folder)");
    ONYX_CHECK(it->second == "content" || it->second == "content_always" || it->second == "file_stat",
               kInvalidArgument, kConfigCreationCacheKey, " must be 'content', 'content_always' or 'file_stat', got '",
               it->second, "'");
  }
}

int64_t TotalInitializerBytes(const ir::Graph& graph) {
  int64_t total = 0;
  for (const auto& [name, t] : graph.initializers) total += t.byte_size();
  for (const auto& node : graph.nodes)
    for (const auto& a : node->attributes) {
      if (a.g) total += TotalInitializerBytes(*a.g);
      for (const auto& sub : a.graphs) total += TotalInitializerBytes(*sub);
    }
  return total;
}

// Drops a constant the kernels no longer read; its type stays declared, so `onyx explain` can
// still tell what a kernel made of it.
void ReleaseInitializer(ir::Graph& graph, const std::string& name) {
  const Tensor* t = graph.FindInitializer(name);
  if (t == nullptr) return;
  std::vector<Dim> dims;
  for (int64_t d : t->shape()) dims.push_back(Dim{d, ""});
  graph.value_types.emplace(name, TypeInfo::Tensor(t->dtype(), std::move(dims)));
  graph.initializers.erase(name);
}

}  // namespace

SessionImpl::SessionImpl(std::shared_ptr<ir::Model> model, const SessionOptions& options)
    : options_(options), model_(std::move(model)) {
  Prepare();
  ApplyModelOptions(*model_, options_, ModelLabel());
  Optimize();
  SaveOptimizedModel();
  BuildPlan(nullptr);
}

SessionImpl::SessionImpl(const ModelSource& source, const SessionOptions& options) : options_(options) {
  model_label_ = source.path.empty() ? "<model bytes>" : source.path;
  Prepare();
  CreateWithCache(source);
}

void SessionImpl::CreateWithCache(const ModelSource& source) {
  const LoadLimits limits = LoadLimitsFromConfig(options_.config_entries);
  const auto entry = options_.config_entries.find(kConfigCreationCacheDir);
  if (entry == options_.config_entries.end()) {  // no cache: as the other constructor
    model_ = source.path.empty() ? LoadModelFromBytes(source.bytes, source.size, limits)
                                 : LoadModelFromFile(source.path, limits);
    ApplyModelOptions(*model_, options_, ModelLabel());
    Optimize();
    SaveOptimizedModel();
    BuildPlan(nullptr);
    return;
  }
  const std::string dir = entry->second;
  ONYX_CHECK(!dir.empty(), kInvalidArgument, kConfigCreationCacheDir, " names no folder");
  std::error_code ec;
  if (!source.path.empty() && !std::filesystem::is_regular_file(source.path, ec))
    LoadModelFromFile(source.path, limits);  // throws the loader's error for a missing model
  const CreationCacheKey key = source.path.empty()
                                   ? MakeCreationCacheKey(source.bytes, source.size, options_, pool_.get())
                                   : MakeCreationCacheKey(source.path, options_, pool_.get());
  std::string why;
  if (std::optional<CachedCreation> hit = OpenCreationCache(dir, key, pool_.get(), &why)) {
    model_ = hit->model;
    model_->path = source.path;
    report_ = hit->report;
    cache_status_ = "hit";
    SaveOptimizedModel();
    BuildPlan(StoreOf(*hit));
    packs_reused_ = StatsOf(*hit).packs_reused;
    packs_made_ = StatsOf(*hit).packs_made;
    logger_.Info("creation cache hit: ", hit->path, " (", StatsOf(*hit).packs_reused, " packed weights mapped, ",
                 StatsOf(*hit).packs_made, " packed now; optimizer skipped)");
    return;
  }
  const std::string path = (std::filesystem::path(dir) / key.FileName()).string();
  if (!why.empty()) {
    logger_.Warning("creation cache file '", path, "' is not used: ", why, "; it is rebuilt");
    cache_status_ = "rejected: " + why;
  } else {
    cache_status_ = "miss";
  }
  std::vector<std::string> external_files;
  model_ = source.path.empty() ? LoadModelFromBytes(source.bytes, source.size, limits)
                               : LoadModelFromFile(source.path, limits, &external_files);
  ApplyModelOptions(*model_, options_, ModelLabel());
  Optimize();
  SaveOptimizedModel();
  WriteAllDeferredWidenings(*model_->graph);  // the cache file holds every value
  std::unique_ptr<CreationCacheWriter> writer;
  try {
    writer = std::make_unique<CreationCacheWriter>(dir, key, *model_, external_files, pool_.get(), report_);
    model_ = writer->model();
    model_->path = source.path;
  } catch (const Error& e) {
    logger_.Warning("creation cache file '", path, "' cannot be written: ", e.what());
    cache_status_ = StrCat("unwritable: ", e.what());
    writer.reset();
  }
  BuildPlan(writer ? writer->store() : nullptr);
  if (!writer) return;
  packs_made_ = writer->stats().packs_made;
  try {
    writer->Commit();
    logger_.Info("creation cache written: ", path, " (", writer->stats().packs_made, " packed weights)");
  } catch (const Error& e) {
    logger_.Warning("creation cache file '", path, "' cannot be written: ", e.what());
    cache_status_ = StrCat("unwritable: ", e.what());
  }
}

void SessionImpl::Prepare() {
  const SessionOptions& options = options_;
  CheckProviderOptionsNames(options);
  bool has_cpu = false;
  for (const auto& name : options.execution_providers) {
    providers_.push_back(MakeProvider(name, options));
    has_cpu = has_cpu || providers_.back()->name() == "CPU";
  }
  if (!has_cpu) providers_.push_back(MakeProvider("CPU", options));
  CheckConfigKeys(options.config_entries);
  run_limits_ = RunLimitsFromConfig(options.config_entries);
  logger_ = Logger(options.logid, options.log_severity_level, options.log_verbosity_level, "SessionOptions");
  // Thread options are checked before the (possibly long) optimization.
  SessionThreadPools pools = CreateSessionThreadPools(options);
  pool_ = std::move(pools.intra_op);
  inter_pool_ = std::move(pools.inter_op);
}

void SessionImpl::BuildPlan(std::shared_ptr<PackedWeightStore> packs) {
  const SessionOptions& options = options_;
  if (options.enable_cpu_mem_arena) arena_ = std::make_shared<ArenaAllocator>(CpuArenaBackingAllocator(), options.cpu_arena_max_bytes);

  GraphPlan::BuildContext ctx;
  // Without a creation cache's store, the packs go where the session's config puts them.
  if (!packs) packs = PackStoreFor(PackPlacementFromConfig(options.config_entries));
  ctx.packed_weights = std::move(packs);
  for (const auto& p : providers_) ctx.providers.push_back(p.get());
  ctx.pool = pool_.get();
  ctx.release_mapped_pages = model_->release_mapped_pages;
  ctx.release_early = options.enable_mem_reuse;
  ctx.in_place_reuse = InPlaceReuseFromConfig(options.config_entries);
  ctx.placement_only = options.placement_only;
  ctx.release_initializer = [this](const std::string& name) { ReleaseInitializer(*model_->graph, name); };
  WriteWideningsOtherReadersNeed(*model_->graph);
  const ir::Graph& graph = *model_->graph;
  try {
    plan_ = GraphPlan::Build(graph, ctx);
  } catch (const Error& e) {
    throw Error(e.code(), StrCat(ModelLabel(), ": ", e.what()));
  }

  // Kernels have copied or pre-packed what they need: the originals no kernel reads go, and the
  // file pages are let go (the ones still read at run time come back on first use).
  for (const auto& name : plan_->unread_initializers()) ReleaseInitializer(*model_->graph, name);
  // A float16 weight's float stand-in a kernel did not pack (and still reads) gets its values
  // before the file pages go.
  WriteAllDeferredWidenings(*model_->graph);
  if (model_->release_mapped_pages) model_->release_mapped_pages();

  for (const auto& in : graph.inputs) {
    (graph.IsInitializer(in.name) ? overridable_ : inputs_).push_back(IoInfo{in.name, in.type});
  }
  for (const auto& out : graph.outputs) outputs_.push_back(IoInfo{out.name, out.type});

  metadata_.ir_version = model_->ir_version;
  metadata_.producer_name = model_->producer_name;
  metadata_.producer_version = model_->producer_version;
  metadata_.domain = model_->domain;
  metadata_.model_version = model_->model_version;
  metadata_.doc_string = model_->doc_string;
  metadata_.graph_name = graph.name;
  metadata_.opset_imports = model_->opset_imports;
  for (const auto& [k, v] : model_->metadata_props) metadata_.custom_metadata[k] = v;
  LogSessionCreated(logger_, ModelLabel(), options_, *plan_, report_);
}

void SessionImpl::Optimize() {
  OptimizerOptions opt;
  opt.level = static_cast<OptLevel>(static_cast<int>(options_.graph_optimization_level));
  opt.providers.clear();
  for (const auto& p : providers_) opt.providers.push_back(p->name());
  auto it = options_.config_entries.find(kConfigDisableOptimizers);
  if (it != options_.config_entries.end()) opt.disabled_passes = SplitList(it->second);
  opt.defer_half_widening = true;  // BuildPlan and the savers write the values other readers need
  try {
    report_ = OptimizeModel(*model_, opt);
  } catch (const Error& e) {
    throw Error(e.code(), StrCat(ModelLabel(), ": ", e.what()));
  }
}

void SessionImpl::SaveOptimizedModel() {
  if (options_.optimized_model_filepath.empty()) return;
  WriteAllDeferredWidenings(*model_->graph);
  SaveOptions save;
  auto file = options_.config_entries.find(kConfigExternalInitializersFile);
  auto min_size = options_.config_entries.find(kConfigExternalInitializersMinSize);
  constexpr int64_t kInlineLimit = int64_t{1} << 31;
  if (file != options_.config_entries.end() || TotalInitializerBytes(*model_->graph) >= kInlineLimit - (int64_t{1} << 26)) {
    save.external_file_name = file != options_.config_entries.end() ? file->second : "";
    save.external_threshold_bytes = 1024;
    if (min_size != options_.config_entries.end()) {
      try {
        save.external_threshold_bytes = std::stoll(min_size->second);
      } catch (...) {
        ONYX_THROW(kInvalidArgument, kConfigExternalInitializersMinSize, " must be an integer, got '", min_size->second,
                   "'");
      }
    }
  }
  SaveModel(*model_, options_.optimized_model_filepath, save);
}

void CheckProviderOptions(const std::string& provider, const std::map<std::string, std::string>& options) {
  SessionOptions o;
  o.execution_providers = {provider};
  o.provider_options[provider] = options;
  o.placement_only = true;
  MakeProvider(provider, o);
}

int Session::copies_per_run() const { return impl_->plan().copies_per_run(); }
std::string Session::creation_cache_status() const { return impl_->creation_cache_status(); }

std::string ProviderUnavailableReason(const std::string& provider) {
  const std::string name = ShortProviderName(provider);
  if (name == "CPU") return "";
  const ProviderFactory* factory = FindProviderFactory(name);
  ONYX_CHECK(factory != nullptr, kInvalidArgument, "execution provider '", provider, "' is not in this build of Onyx");
  return factory->unavailable_reason ? factory->unavailable_reason() : "";
}

std::string SessionImpl::ModelLabel() const {
  if (!model_) return model_label_;
  return model_->path.empty() ? "<model bytes>" : model_->path;
}

void SessionImpl::CheckFeed(const IoInfo& info, const Value& value) const {
  const TypeInfo* type = info.type.get();
  if (type == nullptr) return;
  auto fail = [&](const std::string& why) {
    ONYX_THROW(kInvalidArgument, ModelLabel(), ": input '", info.name, "' expects ", type->ToString(), ", got ",
               value.Describe(), ": ", why);
  };
  const TypeInfo* want = type;
  if (type->kind == TypeInfo::Kind::kOptional) {
    if (value.is_none()) return;
    want = type->elem.get();
    if (want == nullptr) return;
  }
  switch (want->kind) {
    case TypeInfo::Kind::kTensor: {
      if (!value.is_tensor()) fail("not a tensor");
      const Tensor& t = value.tensor();
      if (want->elem_type != DataType::kUndefined && t.dtype() != want->elem_type)
        fail(StrCat("element type ", DataTypeName(t.dtype()), " instead of ", DataTypeName(want->elem_type)));
      if (want->shape) {
        const auto& dims = *want->shape;
        if (t.rank() != dims.size()) fail(StrCat("rank ", t.rank(), " instead of ", dims.size()));
        for (size_t d = 0; d < dims.size(); ++d)
          if (dims[d].known() && dims[d].value != t.dim(d))
            fail(StrCat("dimension ", d, " is ", t.dim(d), " instead of ", dims[d].value));
      }
      break;
    }
    case TypeInfo::Kind::kSequence:
      if (!value.is_sequence()) fail("not a sequence");
      break;
    case TypeInfo::Kind::kMap:
      if (!value.is_map()) fail("not a map");
      break;
    default:
      break;
  }
}

std::vector<Value> SessionImpl::Run(const NamedValues& feeds, const std::vector<std::string>& output_names,
                                    const RunOptions& run_options, const std::vector<Value>* preallocated) const {
  const int64_t run_start = profiler_ ? NowNanos() : 0;
  // A worker asleep since the last Run starts waking now, while the feeds are checked and the
  // memory is prepared, rather than in the first node's loop.
  if (pool_) pool_->WakeWorkers();
  const ir::Graph& graph = *model_->graph;
  std::unordered_map<std::string, const Value*> fed;
  for (const auto& [name, value] : feeds) {
    if (!graph.IsGraphInput(name)) {
      std::vector<std::string> names;
      for (const auto& in : inputs_) names.push_back(in.name);
      ONYX_THROW(kInvalidArgument, ModelLabel(), ": '", name, "' is not an input of the model (its inputs: ",
                 StrJoin(names), ")");
    }
    ONYX_CHECK(fed.emplace(name, &value).second, kInvalidArgument, ModelLabel(), ": input '", name, "' is fed twice");
  }
  std::vector<Value> positional;
  positional.reserve(graph.inputs.size());
  for (const auto& in : graph.inputs) {
    auto it = fed.find(in.name);
    if (it != fed.end()) {
      CheckFeed(IoInfo{in.name, in.type}, *it->second);
      if (it->second->is_tensor())
        CheckTensorLimits(run_limits_, it->second->tensor().dtype(), it->second->tensor().shape(),
                          StrCat(ModelLabel(), ": input '", in.name, "'"));
      positional.push_back(*it->second);
    } else if (const Tensor* init = graph.FindInitializer(in.name)) {
      positional.emplace_back(*init);
    } else if (in.type && in.type->kind == TypeInfo::Kind::kOptional) {
      positional.push_back(Value::None(in.type->elem));
    } else {
      ONYX_THROW(kInvalidArgument, ModelLabel(), ": input '", in.name, "' (", DescribeType(in.type),
                 ") was not fed");
    }
  }

  std::vector<size_t> picks;
  if (output_names.empty()) {
    for (size_t i = 0; i < graph.outputs.size(); ++i) picks.push_back(i);
  } else {
    for (const auto& name : output_names) {
      size_t i = 0;
      while (i < graph.outputs.size() && graph.outputs[i].name != name) ++i;
      if (i == graph.outputs.size()) {
        std::vector<std::string> names;
        for (const auto& out : graph.outputs) names.push_back(out.name);
        ONYX_THROW(kInvalidArgument, ModelLabel(), ": '", name, "' is not an output of the model (its outputs: ",
                   StrJoin(names), ")");
      }
      picks.push_back(i);
    }
  }

  const std::vector<Tensor> buffers =
      preallocated != nullptr ? BindOutputBuffers(ModelLabel(), graph.outputs, picks, *preallocated) : std::vector<Tensor>{};
  RunMemory memory = PrepareRunMemory(arena_.get(), options_.enable_mem_pattern, positional, run_limits_);
  RunState run;
  run.terminate = run_options.terminate.get();
  const Logger run_logger(run_options.run_tag.empty() ? options_.logid : run_options.run_tag,
                          run_options.log_severity_level, run_options.log_verbosity_level, "RunOptions");
  run.logger = &run_logger;
  run.top_plan = plan_.get();
  run.output_buffers = buffers.empty() ? nullptr : &buffers;
  run.output_allocator = memory.output_allocator;
  // Not after EndProfiling: an ended profiler drops events, and recording them costs.
  run.profiler = profiler_ && profiler_->recording() ? profiler_.get() : nullptr;
  run.pool = pool_.get();
  run.inter_op_pool = inter_pool_.get();
  run.allocator = memory.allocator;
  std::vector<Value> all;
  try {
    const int64_t execute_start = run.profiler != nullptr ? NowNanos() : 0;
    all = plan_->Execute(run, std::move(positional), nullptr);
    in_place_outputs_.fetch_add(run.in_place_outputs, std::memory_order_relaxed);
    if (run.profiler != nullptr)
      run.profiler->RecordSessionEvent(inter_pool_ ? "ParallelExecutor::Execute" : "SequentialExecutor::Execute",
                                       execute_start, NowNanos());
  } catch (const Error& e) {
    const std::string tag = run_options.run_tag.empty() ? "" : StrCat(" (run '", run_options.run_tag, "')");
    throw Error(e.code(), StrCat(ModelLabel(), tag, ": ", e.what()));
  }
  memory.pattern.reset();  // the Run is over: its pattern block goes back for the next one
  if (run_options.shrink_arena_after_run && arena_) arena_->Trim();
  std::vector<Value> result;
  result.reserve(picks.size());
  for (size_t k = 0; k < picks.size(); ++k) {
    const size_t i = picks[k];
    const bool bound = preallocated != nullptr && (*preallocated)[k].is_tensor() && (*preallocated)[k].tensor().defined();
    result.push_back(bound ? FillOutputBuffer(ModelLabel(), graph.outputs[i].name, all[i], (*preallocated)[k].tensor(),
                                              run_logger)
                           : all[i]);
  }
  if (run.profiler != nullptr) run.profiler->RecordSessionEvent("model_run", run_start, NowNanos());
  return result;
}

void SessionImpl::SetProfiler(std::unique_ptr<Profiler> profiler) {
  profiler_ = std::move(profiler);
  if (profiler_) profiler_->SetIntraOpPool(pool_.get(), options_.use_global_thread_pool ? "global-intra-op" : "session-intra-op");
}

// Session: the public face.

namespace {

// Loads the model and creates the session; with profiling, both are timed (ONNX Runtime's
// "model_loading_uri"/"model_loading_array" and "session_initialization" events).
template <typename Load>
std::unique_ptr<SessionImpl> CreateSessionImpl(const SessionOptions& options, const char* load_event, Load load,
                                               const ModelSource& source) {
  if (options.config_entries.count(kConfigCreationCacheDir)) {
    // Loading happens inside (a cache hit loads the cached graph instead): timed as one.
    if (!options.enable_profiling) return std::make_unique<SessionImpl>(source, options);
    auto profiler = std::make_unique<Profiler>(options.profile_file_prefix);
    const int64_t init_start = NowNanos();
    auto impl = std::make_unique<SessionImpl>(source, options);
    profiler->RecordSessionEvent("session_initialization", init_start, NowNanos());
    impl->SetProfiler(std::move(profiler));
    return impl;
  }
  if (!options.enable_profiling) return std::make_unique<SessionImpl>(load(), options);
  auto profiler = std::make_unique<Profiler>(options.profile_file_prefix);
  const int64_t load_start = NowNanos();
  std::shared_ptr<ir::Model> model = load();
  const int64_t init_start = NowNanos();
  profiler->RecordSessionEvent(load_event, load_start, init_start);
  auto impl = std::make_unique<SessionImpl>(std::move(model), options);
  profiler->RecordSessionEvent("session_initialization", init_start, NowNanos());
  impl->SetProfiler(std::move(profiler));
  return impl;
}

}  // namespace

Session::Session(const std::string& model_path, const SessionOptions& options)
    : impl_(CreateSessionImpl(options, "model_loading_uri", [&] {
            return LoadModelFromFile(model_path, LoadLimitsFromConfig(options.config_entries));
          }, ModelSource{model_path, nullptr, 0})) {}

Session::Session(const void* model_bytes, size_t size, const SessionOptions& options)
    : impl_(CreateSessionImpl(options, "model_loading_array", [&] {
            return LoadModelFromBytes(model_bytes, size, LoadLimitsFromConfig(options.config_entries));
          }, ModelSource{"", model_bytes, size})) {}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

const std::vector<IoInfo>& Session::inputs() const { return impl_->inputs(); }
const std::vector<IoInfo>& Session::outputs() const { return impl_->outputs(); }
const std::vector<IoInfo>& Session::overridable_initializers() const { return impl_->overridable_initializers(); }
const ModelMetadata& Session::metadata() const { return impl_->metadata(); }
std::map<std::string, int> Session::fused_operator_statistics() const {
  return impl_->optimization_report().FusedOperatorStatistics();
}

std::vector<Value> Session::Run(const NamedValues& feeds, const std::vector<std::string>& output_names,
                                const RunOptions& run_options) const {
  return impl_->Run(feeds, output_names, run_options);
}

std::string Session::EndProfiling() { return impl_->EndProfiling(); }
int64_t Session::profiling_start_time_ns() const { return impl_->profiling_start_time_ns(); }

}  // namespace onyx
