#include "runtime/creation_cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "base/aligned_memory.h"
#include "base/check.h"
#include "base/hash64.h"
#include "linalg/bf16_gemm.h"
#include "linalg/conv.h"
#include "linalg/gemm.h"
#include "onnx/model_loader.h"
#include "onnx/model_writer.h"
#include "platform/cpu_features.h"
#include "platform/thread_pool.h"
#include "runtime/creation_cache_hash_memo.h"

extern char** environ;

namespace onyx {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'O', 'N', 'Y', 'X', 'C', 'C', '0', '3'};
constexpr const char* kVersion = "0.1.0";  // the project's version (CMakeLists.txt)
constexpr int kFormat = 3;                 // bump when the file layout, a pack layout or Hash64 changes
constexpr size_t kTrailerBytes = 64;
constexpr size_t kPackAlignment = 64;
// Model bytes are hashed in parallel by 1 MB chunks: small enough that two threads share a
// 17 MB model evenly (by 8 MB chunks one thread got two of its three), large enough that the
// per-chunk work is nothing.
constexpr size_t kHashChunk = size_t{1} << 20;
// A model file is read into a buffer of this size, which stays in the core's L2, rather than
// mapped: mapping and unmapping the pages of a page-cached file cost ResNet-50's 103 MB about
// 3x what pread's copy does on a VM (page-table updates), and more than hashing them.
constexpr size_t kReadBlock = size_t{256} << 10;

struct Trailer {
  char magic[8];
  uint64_t key, graph_offset, graph_size, meta_offset, meta_size, file_size, checksum;
};
static_assert(sizeof(Trailer) == kTrailerBytes);

uint64_t Checksum(const uint8_t* graph, const uint8_t* meta, const Trailer& t) {
  Trailer fields = t;
  fields.checksum = 0;
  return Hasher64(kFormat)
      .Add(graph, t.graph_size)
      .Add(meta, t.meta_size)
      .Add(&fields, sizeof(fields))
      .Digest();
}

// Metadata: length-prefixed strings and u64s.
class MetaWriter {
 public:
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void Str(const std::string& s) {
    U64(s.size());
    out_ += s;
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class MetaReader {
 public:
  MetaReader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint64_t U64() {
    ONYX_CHECK(pos_ + 8 <= n_, kInvalidModel, "metadata ends early");
    uint64_t v;
    std::memcpy(&v, p_ + pos_, 8);
    pos_ += 8;
    return v;
  }
  std::string Str() {
    const uint64_t len = U64();
    ONYX_CHECK(len <= n_ - pos_, kInvalidModel, "metadata string runs past its end");
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  const uint8_t* p_;
  size_t n_, pos_ = 0;
};

void WriteCounts(MetaWriter& w, const std::map<std::string, int>& counts) {
  w.U64(counts.size());
  for (const auto& [name, n] : counts) {
    w.Str(name);
    w.U64(static_cast<uint64_t>(n));
  }
}

std::map<std::string, int> ReadCounts(MetaReader& r) {
  std::map<std::string, int> counts;
  const uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string name = r.Str();
    counts[name] = static_cast<int>(r.U64());
  }
  return counts;
}

void WriteReport(MetaWriter& w, const OptimizationReport& report) {
  w.U64(static_cast<uint64_t>(report.level));
  w.U64(report.passes.size());
  for (const auto& p : report.passes) {
    w.Str(p.name);
    w.U64(static_cast<uint64_t>(p.rewrites));
    WriteCounts(w, p.counts);
  }
  WriteCounts(w, report.op_counts_before);
  WriteCounts(w, report.op_counts_after);
}

OptimizationReport ReadReport(MetaReader& r) {
  OptimizationReport report;
  report.level = static_cast<OptLevel>(r.U64());
  const uint64_t passes = r.U64();
  for (uint64_t i = 0; i < passes; ++i) {
    PassReport p;
    p.name = r.Str();
    p.rewrites = static_cast<int>(r.U64());
    p.counts = ReadCounts(r);
    report.passes.push_back(std::move(p));
  }
  report.op_counts_before = ReadCounts(r);
  report.op_counts_after = ReadCounts(r);
  return report;
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Size and modification time of the Onyx library file: a rebuild that changes a pack layout
// without a version bump still makes other files.
std::string LibraryIdentity() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&CreationCacheBuildText), &info) == 0 || info.dli_fname == nullptr)
    return "unknown-library";
  struct stat st{};
  if (::stat(info.dli_fname, &st) != 0) return "unknown-library";
  return StrCat(static_cast<long long>(st.st_size), "@", static_cast<long long>(st.st_mtim.tv_sec), ".",
                static_cast<long long>(st.st_mtim.tv_nsec));
}

void AllocateAndFill(size_t bytes, const std::function<void(void*)>& fill, PackedWeightStore::Blob& blob) {
  void* p = AllocateAligned(bytes, kPackAlignment, /*share_huge_pages=*/true);
  if (p == nullptr) throw std::bad_alloc();
  std::shared_ptr<void> owner(p, [](void* q) { FreeAligned(q); });
  fill(p);
  blob.data = p;
  blob.bytes = bytes;
  blob.owner = std::move(owner);
}

}  // namespace

// Hit: packs by key as views into the file. Miss: fresh packs, remembered for the file (a key
// asked for twice, by nodes of the same name, is left out of it).
class CreationCacheStore final : public PackedWeightStore {
 public:
  struct Entry {
    uint64_t offset = 0, bytes = 0;
  };
  CreationCacheStore(std::shared_ptr<const MappedFile> file, std::unordered_map<std::string, Entry> entries)
      : file_(std::move(file)), entries_(std::move(entries)) {}
  CreationCacheStore() = default;

  Blob Get(const std::string& key, size_t bytes, const std::function<void(void*)>& fill) override {
    std::lock_guard<std::mutex> lock(mu_);
    Blob blob;
    if (file_) {
      auto it = entries_.find(key);
      if (it != entries_.end() && it->second.bytes == bytes) {
        blob.data = const_cast<uint8_t*>(file_->data() + it->second.offset);
        blob.bytes = bytes;
        blob.owner = file_;
        ++stats_.packs_reused;
        return blob;
      }
    }
    AllocateAndFill(bytes, fill, blob);
    ++stats_.packs_made;
    if (!file_ && recording_) {
      if (!asked_.insert(key).second) {
        made_.erase(key);
      } else {
        made_[key] = blob;
      }
    }
    return blob;
  }

  // The packs made while recording, by key; recording stops.
  std::map<std::string, Blob> TakeMade() {
    std::lock_guard<std::mutex> lock(mu_);
    recording_ = false;
    return std::move(made_);
  }
  const CreationCacheStats& stats() const { return stats_; }

 private:
  std::mutex mu_;
  std::shared_ptr<const MappedFile> file_;
  std::unordered_map<std::string, Entry> entries_;
  bool recording_ = true;
  std::unordered_set<std::string> asked_;
  std::map<std::string, Blob> made_;
  CreationCacheStats stats_;
};

std::string CreationCacheKey::FileName() const { return "onyx-" + Hex(hash) + ".cache"; }

std::string CreationCacheBuildText() {
  // Once per process (dladdr and stat were a visible part of a small model's cached creation).
  static const std::string text = StrCat("onyx ", kVersion, " format ", kFormat, " lib ", LibraryIdentity());
  return text;
}

std::string CreationCacheCpuText() {
  const CpuFeatures& f = GetCpuFeatures();
  std::string text = StrCat("avx2=", f.avx2, " fma=", f.fma, " f16c=", f.f16c, " avx512f=", f.avx512f,
                            " avx512bw=", f.avx512bw, " avx512vl=", f.avx512vl, " avx512vnni=", f.avx512vnni,
                            " avx_vnni=", f.avx_vnni, " avx512_bf16=", f.avx512_bf16,
                            " sgemm=", linalg::SgemmKernelName(), " bf16gemm=", linalg::Bf16GemmKernelName(),
                            " conv=", linalg::ConvIsaName());
  // Environment overrides of kernel choices (ONYX_LINALG_ISA, ONYX_CONV_ALGO, ...), except the
  // test harness's paths.
  std::vector<std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string var = *e;
    if (var.rfind("ONYX_", 0) != 0) continue;
    const std::string name = var.substr(0, var.find('='));
    if (name == "ONYX_BIN" || name == "ONYX_SHARED_DIR" || name == "ONYX_WORK_DIR") continue;
    vars.push_back(var);
  }
  std::sort(vars.begin(), vars.end());
  for (const auto& v : vars) text += " " + v;
  return text;
}

std::string CreationCacheOptionsText(const SessionOptions& o) {
  std::ostringstream s;
  s << "level=" << static_cast<int>(o.graph_optimization_level) << " intra=" << o.intra_op_num_threads
    << " inter=" << o.inter_op_num_threads << " mode=" << static_cast<int>(o.execution_mode)
    << " global_pool=" << o.use_global_thread_pool << " placement_only=" << o.placement_only
    << " deterministic=" << o.use_deterministic_compute << " providers=";
  for (const auto& p : o.execution_providers) s << p << ",";
  for (const auto& [provider, values] : o.provider_options)
    for (const auto& [k, v] : values) s << " po:" << provider << ":" << k << "=" << v;
  for (const auto& [k, v] : o.config_entries)
    if (k != kConfigCreationCacheDir) s << " cfg:" << k << "=" << v;
  for (const auto& [k, v] : o.free_dimension_overrides_by_name) s << " dim:" << k << "=" << v;
  // Caller-supplied initializers replace the model's: their bytes count like the model's.
  for (const auto& [name, t] : o.initializers) {
    s << " init:" << name << ":" << DataTypeName(t.dtype()) << ShapeToString(t.shape()) << ":";
    s << Hex(t.defined() && t.byte_size() > 0 ? Hash64(t.raw_data(), static_cast<size_t>(t.byte_size())) : 0);
  }
  return s.str();
}

// Chunk c of a file hashes with seed c and the chunks' hashes are hashed together, so the value
// does not depend on the thread count, nor on whether the bytes came from memory or a file.
static uint64_t CombineChunkHashes(const std::vector<uint64_t>& parts, size_t size) {
  return Hash64(parts.data(), parts.size() * sizeof(uint64_t), size);
}

uint64_t HashFileBytes(const void* data, size_t size, ThreadPool* pool) {
  if (size <= kHashChunk) return Hash64(data, size);
  const int64_t chunks = static_cast<int64_t>((size + kHashChunk - 1) / kHashChunk);
  std::vector<uint64_t> parts(static_cast<size_t>(chunks));
  const auto* bytes = static_cast<const uint8_t*>(data);
  ThreadPool::For(pool, chunks, static_cast<double>(kHashChunk), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const size_t off = static_cast<size_t>(c) * kHashChunk;
      parts[static_cast<size_t>(c)] = Hash64(bytes + off, std::min(kHashChunk, size - off), static_cast<uint64_t>(c));
    }
  });
  return CombineChunkHashes(parts, size);
}

namespace {

// HashFileBytes of the `size` bytes of open file `fd`, read with pread through a small buffer
// per thread (chunks in parallel on `pool`). Throws Error naming the path when a read fails or
// the file ends early.
uint64_t HashOpenFile(int fd, size_t size, const std::string& path, ThreadPool* pool) {
  const size_t chunk_bytes = size <= kHashChunk ? size : kHashChunk;
  const int64_t chunks = size == 0 ? 1 : static_cast<int64_t>((size + chunk_bytes - 1) / chunk_bytes);
  std::vector<uint64_t> parts(static_cast<size_t>(chunks));
  ThreadPool::For(pool, chunks, static_cast<double>(chunk_bytes), [&](int64_t begin, int64_t end) {
    std::unique_ptr<uint8_t[]> buffer(new uint8_t[kReadBlock]);
    for (int64_t c = begin; c < end; ++c) {
      const size_t first = static_cast<size_t>(c) * chunk_bytes;
      const size_t last = std::min(size, first + chunk_bytes);
      Hash64Stream stream(size <= kHashChunk ? 0 : static_cast<uint64_t>(c));
      for (size_t off = first; off < last;) {
        const ssize_t got = ::pread(fd, buffer.get(), std::min(kReadBlock, last - off), static_cast<off_t>(off));
        if (got < 0 && errno == EINTR) continue;
        ONYX_CHECK(got > 0, kInvalidModel, "cannot read '", path, "' at byte ", off, ": ",
                   got == 0 ? "the file ended early (was it changed while read?)" : std::strerror(errno));
        stream.Update(buffer.get(), static_cast<size_t>(got));
        off += static_cast<size_t>(got);
      }
      parts[static_cast<size_t>(c)] = stream.Digest();
    }
  });
  return size <= kHashChunk ? parts[0] : CombineChunkHashes(parts, size);
}

}  // namespace

uint64_t HashFile(const std::string& path, ThreadPool* pool, uint64_t* size, const FileHashOptions& how) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ONYX_CHECK(fd >= 0, kNoSuchFile, "cannot open '", path, "': ", std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    ONYX_THROW(kNoSuchFile, "'", path, "' is not a regular file");
  }
  *size = static_cast<uint64_t>(st.st_size);
  std::error_code ec;
  if (how.mode == FileKeyMode::kFileStat) {
    Hasher64 h(0x5354);
    h.Add(fs::absolute(path, ec).string()).AddU64(*size).AddU64(st.st_ino).AddU64(st.st_dev);
    h.AddU64(st.st_mtim.tv_sec).AddU64(st.st_mtim.tv_nsec).AddU64(st.st_ctim.tv_sec).AddU64(st.st_ctim.tv_nsec);
    constexpr size_t kEdge = 64 << 10;
    std::vector<char> edge(kEdge);
    for (const uint64_t off : {uint64_t{0}, *size > kEdge ? *size - kEdge : 0}) {
      const ssize_t got = ::pread(fd, edge.data(), kEdge, static_cast<off_t>(off));
      h.Add(edge.data(), got > 0 ? static_cast<size_t>(got) : 0);
    }
    ::close(fd);
    return h.Digest();
  }
  const bool memo = how.mode == FileKeyMode::kContent && !how.memo_dir.empty();
  const FileIdentity identity = IdentityOf(st);
  const std::string abs_path = memo ? fs::absolute(path, ec).string() : "";
  if (memo) {
    if (const std::optional<uint64_t> known = RecallContentHash(how.memo_dir, abs_path, identity)) {
      ::close(fd);
      return *known;
    }
  }
  const int64_t hashed_at = how.now_ns != 0 ? how.now_ns : RealtimeNowNs();
  uint64_t h = 0;
  try {
    h = HashOpenFile(fd, static_cast<size_t>(*size), path, pool);
  } catch (...) {
    ::close(fd);
    throw;
  }
  struct stat after{};
  const bool still = ::fstat(fd, &after) == 0;
  ::close(fd);
  if (memo && still) RememberContentHash(how.memo_dir, abs_path, identity, IdentityOf(after), h, hashed_at);
  return h;
}

namespace {

CreationCacheKey KeyOf(uint64_t bytes_hash, uint64_t size, const SessionOptions& options) {
  CreationCacheKey key;
  key.build = CreationCacheBuildText();
  key.cpu = CreationCacheCpuText();
  key.options = CreationCacheOptionsText(options);
  key.hash = Hasher64()
                 .AddU64(bytes_hash)
                 .AddU64(size)
                 .Add(key.build)
                 .Add(key.cpu)
                 .Add(key.options)
                 .Digest();
  return key;
}

}  // namespace

CreationCacheKey MakeCreationCacheKey(const void* model_bytes, size_t size, const SessionOptions& options,
                                      ThreadPool* pool) {
  return KeyOf(HashFileBytes(model_bytes, size, pool), size, options);
}

FileKeyMode FileKeyModeOf(const SessionOptions& options) {
  const auto it = options.config_entries.find(kConfigCreationCacheKey);
  if (it == options.config_entries.end() || it->second == "content") return FileKeyMode::kContent;
  if (it->second == "content_always") return FileKeyMode::kContentAlways;
  ONYX_CHECK(it->second == "file_stat", kInvalidArgument, kConfigCreationCacheKey,
             " must be 'content', 'content_always' or 'file_stat', got '", it->second, "'");
  return FileKeyMode::kFileStat;
}

CreationCacheKey MakeCreationCacheKey(const std::string& model_path, const SessionOptions& options, ThreadPool* pool) {
  FileHashOptions how;
  how.mode = FileKeyModeOf(options);
  if (const auto dir = options.config_entries.find(kConfigCreationCacheDir); dir != options.config_entries.end())
    how.memo_dir = dir->second;
  uint64_t size = 0;
  const uint64_t h = HashFile(model_path, pool, &size, how);
  CreationCacheKey key = KeyOf(h, size, options);
  key.file_mode = how.mode;
  key.memo_dir = how.memo_dir;
  return key;
}

std::optional<CachedCreation> OpenCreationCache(const std::string& dir, const CreationCacheKey& key, ThreadPool* pool,
                                                std::string* why) {
  why->clear();
  const std::string path = (fs::path(dir) / key.FileName()).string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  std::shared_ptr<const MappedFile> file;
  try {
    file = MappedFile::Open(path);
  } catch (const Error& e) {
    *why = StrCat("it cannot be read (", e.what(), ")");
    return std::nullopt;
  }
  auto reject = [&](const std::string& reason) -> std::optional<CachedCreation> {
    *why = reason;
    return std::nullopt;
  };
  const size_t n = file->size();
  if (n < kTrailerBytes) return reject(StrCat("it is truncated (", n, " bytes)"));
  Trailer t;
  std::memcpy(&t, file->data() + n - kTrailerBytes, kTrailerBytes);
  if (std::memcmp(t.magic, kMagic, sizeof(kMagic)) != 0)
    return reject("it has no Onyx creation cache trailer (truncated, or not such a file)");
  if (t.file_size != n) return reject(StrCat("its size is ", n, " bytes, its trailer says ", t.file_size));
  const uint64_t body = n - kTrailerBytes;
  if (t.graph_offset > body || t.graph_size > body - t.graph_offset || t.meta_offset != t.graph_offset + t.graph_size ||
      t.meta_size != body - t.meta_offset)
    return reject("its trailer's section offsets are inconsistent");
  const uint8_t* graph = file->data() + t.graph_offset;
  const uint8_t* meta = file->data() + t.meta_offset;
  if (Checksum(graph, meta, t) != t.checksum) return reject("the checksum of its graph and metadata does not match");
  std::unordered_map<std::string, CreationCacheStore::Entry> entries;
  OptimizationReport report;
  try {
    MetaReader r(meta, t.meta_size);
    const std::string build = r.Str(), cpu = r.Str(), options = r.Str();
    const uint64_t file_key = r.U64();
    if (build != key.build) return reject(StrCat("it was made by another Onyx build (", build, "; this is ", key.build, ")"));
    if (cpu != key.cpu) return reject(StrCat("it was made for other CPU features (", cpu, "; this CPU: ", key.cpu, ")"));
    if (options != key.options)
      return reject(StrCat("it was made with other session options (", options, "; now: ", key.options, ")"));
    if (file_key != key.hash || t.key != key.hash) return reject("its key is not the model's");
    const uint64_t externals = r.U64();
    for (uint64_t i = 0; i < externals; ++i) {
      const std::string ext = r.Str();
      const uint64_t size = r.U64(), hash = r.U64();
      uint64_t now_size = 0, now_hash = 0;
      try {
        now_hash = HashFile(ext, pool, &now_size, FileHashOptions{key.file_mode, key.memo_dir});
      } catch (const Error&) {
        return reject(StrCat("the model's external data file '", ext, "' cannot be read"));
      }
      if (now_size != size || now_hash != hash)
        return reject(StrCat("the model's external data file '", ext, "' changed"));
    }
    const uint64_t packs = r.U64();
    for (uint64_t i = 0; i < packs; ++i) {
      std::string name = r.Str();
      CreationCacheStore::Entry e;
      e.offset = r.U64();
      e.bytes = r.U64();
      if (e.offset % kPackAlignment != 0 || e.offset > t.graph_offset || e.bytes > t.graph_offset - e.offset)
        return reject(StrCat("pack '", name, "' lies outside the file's pack section"));
      entries.emplace(std::move(name), e);
    }
    report = ReadReport(r);
  } catch (const Error& e) {
    return reject(StrCat("its metadata is corrupt (", e.what(), ")"));
  }
  CachedCreation hit;
  hit.path = path;
  hit.file = file;
  hit.report = std::move(report);
  try {
    hit.model = LoadModelFromMappedBytes(graph, t.graph_size, file, path, dir, {{key.FileName(), file}});
  } catch (const Error& e) {
    return reject(StrCat("its graph does not load (", e.what(), ")"));
  }
  hit.store = std::make_shared<CreationCacheStore>(file, std::move(entries));
  return hit;
}

std::shared_ptr<PackedWeightStore> StoreOf(const CachedCreation& hit) { return hit.store; }
const CreationCacheStats& StatsOf(const CachedCreation& hit) { return hit.store->stats(); }

CreationCacheWriter::CreationCacheWriter(const std::string& dir, const CreationCacheKey& key,
                                         const ir::Model& optimized, const std::vector<std::string>& external_files,
                                         ThreadPool* pool, OptimizationReport report)
    : key_(key), store_(std::make_shared<CreationCacheStore>()), report_(std::move(report)) {
  report_.provenance = {};  // onyx explain's, not kept
  std::error_code ec;
  fs::create_directories(dir, ec);
  ONYX_CHECK(fs::is_directory(dir), kRuntime, "creation cache folder '", dir, "' cannot be made: ", ec.message());
  final_path_ = (fs::path(dir) / key.FileName()).string();
  static std::atomic<int> counter{0};
  std::random_device rd;
  tmp_dir_ = (fs::path(dir) / StrCat(".onyx-tmp-", ::getpid(), "-", counter++, "-", Hex(rd()))).string();
  ONYX_CHECK(fs::create_directory(tmp_dir_, ec), kRuntime, "creation cache: cannot make '", tmp_dir_,
             "': ", ec.message());
  tmp_path_ = (fs::path(tmp_dir_) / key.FileName()).string();
  for (const auto& ext : external_files) {
    External e{ext};
    e.hash = HashFile(ext, pool, &e.size, FileHashOptions{key.file_mode, key.memo_dir});
    externals_.push_back(e);
  }
  // The tensors go to the file itself (named as the final file, in the temporary folder), the
  // graph to a side file read back below.
  SaveOptions save;
  save.external_threshold_bytes = 1024;
  save.external_file_name = key.FileName();
  const std::string graph_path = (fs::path(tmp_dir_) / "graph.onnx").string();
  SaveModel(optimized, graph_path, save);
  std::ifstream in(graph_path, std::ios::binary);
  auto graph = std::make_shared<std::string>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ONYX_CHECK(in.good() || in.eof(), kRuntime, "creation cache: cannot read back '", graph_path, "'");
  fs::remove(graph_path, ec);
  auto data = MappedFile::Open(tmp_path_);
  model_ = LoadModelFromMappedBytes(reinterpret_cast<const uint8_t*>(graph->data()), graph->size(), graph,
                                    final_path_, tmp_dir_, {{key.FileName(), data}});
  graph_bytes_ = graph;
}

CreationCacheWriter::~CreationCacheWriter() {
  std::error_code ec;
  if (!tmp_dir_.empty()) fs::remove_all(tmp_dir_, ec);
}

std::shared_ptr<PackedWeightStore> CreationCacheWriter::store() const { return store_; }
const CreationCacheStats& CreationCacheWriter::stats() const { return store_->stats(); }

void CreationCacheWriter::Commit() {
  ONYX_CHECK(!committed_, kRuntime, "creation cache '", final_path_, "' committed twice");
  std::map<std::string, PackedWeightStore::Blob> packs = store_->TakeMade();
  std::FILE* f = std::fopen(tmp_path_.c_str(), "ab");
  ONYX_CHECK(f != nullptr, kRuntime, "creation cache: cannot append to '", tmp_path_, "'");
  bool ok = std::fseek(f, 0, SEEK_END) == 0;
  uint64_t pos = ok ? static_cast<uint64_t>(std::ftell(f)) : 0;
  auto write = [&](const void* p, size_t bytes) {
    if (ok && bytes > 0) ok = std::fwrite(p, 1, bytes, f) == bytes;
    pos += bytes;
  };
  const std::vector<char> zeros(kPackAlignment, 0);
  auto align = [&] { write(zeros.data(), (kPackAlignment - pos % kPackAlignment) % kPackAlignment); };
  MetaWriter meta;
  meta.Str(key_.build);
  meta.Str(key_.cpu);
  meta.Str(key_.options);
  meta.U64(key_.hash);
  meta.U64(externals_.size());
  for (const auto& e : externals_) {
    meta.Str(e.path);
    meta.U64(e.size);
    meta.U64(e.hash);
  }
  meta.U64(packs.size());
  for (const auto& [name, blob] : packs) {
    align();
    meta.Str(name);
    meta.U64(pos);
    meta.U64(blob.bytes);
    write(blob.data, blob.bytes);
  }
  WriteReport(meta, report_);
  Trailer t{};
  std::memcpy(t.magic, kMagic, sizeof(kMagic));
  t.key = key_.hash;
  t.graph_offset = pos;
  t.graph_size = graph_bytes_->size();
  write(graph_bytes_->data(), graph_bytes_->size());
  t.meta_offset = pos;
  t.meta_size = meta.bytes().size();
  write(meta.bytes().data(), meta.bytes().size());
  t.file_size = pos + kTrailerBytes;
  t.checksum = Checksum(reinterpret_cast<const uint8_t*>(graph_bytes_->data()),
                        reinterpret_cast<const uint8_t*>(meta.bytes().data()), t);
  write(&t, sizeof(t));
  ok = std::fclose(f) == 0 && ok;
  ONYX_CHECK(ok, kRuntime, "creation cache: writing '", tmp_path_, "' failed");
  std::error_code ec;
  fs::rename(tmp_path_, final_path_, ec);
  ONYX_CHECK(!ec, kRuntime, "creation cache: cannot rename '", tmp_path_, "' to '", final_path_, "': ", ec.message());
  committed_ = true;
}

}  // namespace onyx
