// The session's creation cache (opt-in: config entry session.onyx_creation_cache_dir): the
// optimized graph and every packed weight of one creation, written to one file per key so the
// next creation of the same model with the same build, CPU and options maps the file and skips
// the optimizer and the packing.
//
// File "onyx-<key as 16 hex digits>.cache", all integers little-endian:
//   [0, data_end)            the optimized graph's tensors of >= 1 KB, 4096-aligned (the ONNX
//                            graph below refers to them as external data in this very file)
//   packs                    each 64-byte aligned, as the kernels read them
//   graph                    the optimized model as an ONNX ModelProto
//   meta                     build, CPU and options texts, the key, the model's external data
//                            files (path, size, hash), the pack table (key, offset, bytes), the
//                            optimizer's report (passes, op counts before and after)
//   trailer (64 bytes)       magic, key, graph and meta offsets and sizes, file size, and the
//                            hash of graph + meta + trailer fields
// The trailer, the sizes and the hash of graph + meta are checked on every open; the packs and
// tensors are checked for bounds and alignment only (hashing them would cost as much as the
// creation the cache saves). Files are written under a temporary name and renamed into place,
// so concurrent creators never see a partial file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onyx/session.h"
#include "optimizer/pass_manager.h"
#include "platform/mapped_file.h"
#include "providers/kernel.h"

namespace onyx {

class ThreadPool;

inline constexpr const char* kConfigCreationCacheDir = "session.onyx_creation_cache_dir";
// How a model file (and its external data) enters the key: "content" (default: the hash of
// every byte, remembered in the cache folder by the file's identity and taken again only when
// that changed: creation_cache_hash_memo.h says exactly what that guarantees), "content_always"
// (every byte hashed on every creation) or "file_stat" (path, size, inode, device, modification
// and change times, and the first and last 64 KB: no full read; a file rewritten in place
// changes its change time, which no user call can set back, so only a file system without
// change times could fool it).
inline constexpr const char* kConfigCreationCacheKey = "session.onyx_creation_cache_key";

enum class FileKeyMode { kContent, kContentAlways, kFileStat };
// The mode the options ask for; throws Error(kInvalidArgument) naming a value that is none.
FileKeyMode FileKeyModeOf(const SessionOptions& options);

struct CreationCacheKey {
  uint64_t hash = 0;     // of the model's bytes and the three texts
  std::string build;     // Onyx version, cache format and the library file's identity
  std::string cpu;       // CPU features, the kernels chosen by them, ONYX_* kernel overrides
  std::string options;   // every session option that may change the optimized graph or packs
  FileKeyMode file_mode = FileKeyMode::kContent;  // how files enter (kConfigCreationCacheKey)
  std::string memo_dir;  // where content hashes are remembered (kContent; empty: nowhere)
  std::string FileName() const;
};

// The identity texts of this process and these options.
std::string CreationCacheBuildText();
std::string CreationCacheCpuText();
std::string CreationCacheOptionsText(const SessionOptions& options);
// Hashes the model bytes (in parallel on `pool` when large) with the three texts.
CreationCacheKey MakeCreationCacheKey(const void* model_bytes, size_t size, const SessionOptions& options,
                                      ThreadPool* pool);
// The same for a model file.
CreationCacheKey MakeCreationCacheKey(const std::string& model_path, const SessionOptions& options, ThreadPool* pool);
uint64_t HashFileBytes(const void* data, size_t size, ThreadPool* pool);
// A file's identity for the key: HashFileBytes of all its bytes (kContent takes it from a record
// in memo_dir while the file is unchanged, and writes the record), or with kFileStat its path,
// size, inode, device, times and first and last 64 KB (kConfigCreationCacheKey); *size gets its
// size. Throws Error naming the path. now_ns (tests) replaces the clock the memo checks the
// file's change time against.
struct FileHashOptions {
  FileKeyMode mode = FileKeyMode::kContentAlways;
  std::string memo_dir;
  int64_t now_ns = 0;
};
uint64_t HashFile(const std::string& path, ThreadPool* pool, uint64_t* size, const FileHashOptions& how = {});

// What a creation did with the cache, for the log and tests.
struct CreationCacheStats {
  int packs_reused = 0;  // given as views into the file
  int packs_made = 0;    // packed now (missing from the file, or no file)
};

// A packed-weight store over an opened cache file (hit) or recording fresh packs (miss).
class CreationCacheStore;

struct CachedCreation {
  std::string path;
  std::shared_ptr<const MappedFile> file;
  std::shared_ptr<ir::Model> model;  // the optimized graph; tensors view the file
  OptimizationReport report;         // the optimizer's, when the file was written (no provenance)
  std::shared_ptr<CreationCacheStore> store;
};

// The valid cache file for `key` in `dir`, or nullopt: then *why is empty when there is no file,
// else the reason the file was not trusted.
std::optional<CachedCreation> OpenCreationCache(const std::string& dir, const CreationCacheKey& key,
                                                ThreadPool* pool, std::string* why);

// Writes a cache file for `key`: the constructor writes the optimized model's tensors and graph
// to a temporary file in `dir` and loads the graph back from it (so a miss builds its kernels
// from exactly the graph a hit will see); the kernels then pack through store(); Commit adds the
// packs, metadata and trailer and renames the file into place. Without Commit, the temporary
// file is removed. Errors are Error(kRuntime) naming the file.
class CreationCacheWriter {
 public:
  CreationCacheWriter(const std::string& dir, const CreationCacheKey& key, const ir::Model& optimized,
                      const std::vector<std::string>& external_files, ThreadPool* pool,
                      OptimizationReport report = {});
  ~CreationCacheWriter();
  CreationCacheWriter(const CreationCacheWriter&) = delete;
  CreationCacheWriter& operator=(const CreationCacheWriter&) = delete;

  std::shared_ptr<ir::Model> model() const { return model_; }
  std::shared_ptr<PackedWeightStore> store() const;
  const CreationCacheStats& stats() const;
  const std::string& path() const { return final_path_; }
  void Commit();

 private:
  struct External {
    std::string path;
    uint64_t size = 0, hash = 0;
  };
  CreationCacheKey key_;
  std::string tmp_dir_, tmp_path_, final_path_;
  std::vector<External> externals_;
  std::shared_ptr<ir::Model> model_;
  std::shared_ptr<CreationCacheStore> store_;
  std::shared_ptr<const std::string> graph_bytes_;  // the ONNX graph, as written and loaded back
  OptimizationReport report_;
  bool committed_ = false;
};

std::shared_ptr<PackedWeightStore> StoreOf(const CachedCreation& hit);
const CreationCacheStats& StatsOf(const CachedCreation& hit);

}  // namespace onyx
