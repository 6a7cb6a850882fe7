// Remembered content hashes for the creation cache's default key ("content"). Hashing every byte
// of a model file is most of a small model's cached creation (bert_tiny: ~3 ms of ~4, the copy
// out of the page cache being the floor), so the hash of a file is kept in the cache folder with
// the file's identity and used again while that identity is unchanged.
//
// What it guarantees: the hash used is the hash of the file's bytes as they were when every byte
// was read, and the file has not been written since: any write changes the file's change time
// (ctime), which no system call sets back. A file whose ctime was less than kSettledNs before the
// hash was taken is never remembered (a second write within the same timestamp tick, or within a
// coarse file system's 2 s granularity, could leave its times unchanged: git's "racy clean"
// problem), nor one whose identity changed while it was read. What could fool it: a file system
// without change times, a clock set backwards past the file's ctime, a block device written
// directly, or a network file server whose clock lags this machine's by more than kSettledNs
// and a rewrite within one of its timestamp ticks of the read.
//
// Record "onyx-file-<Hash64 of the absolute path>.hash" (little-endian): magic, the identity
// (size, inode, device, modification and change times), the content hash, the path, and a
// checksum of all of it. Written under a temporary name and renamed into place; any record that
// does not check out is ignored (the file is hashed again and the record rewritten).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

namespace onyx {

// How long a file must have been unchanged (by its ctime) when it is hashed to be remembered.
inline constexpr int64_t kSettledNs = int64_t{3} * 1000 * 1000 * 1000;

struct FileIdentity {
  uint64_t size = 0, inode = 0, device = 0;
  int64_t mtime_s = 0, mtime_ns = 0, ctime_s = 0, ctime_ns = 0;
  bool operator==(const FileIdentity& o) const {
    return size == o.size && inode == o.inode && device == o.device && mtime_s == o.mtime_s &&
           mtime_ns == o.mtime_ns && ctime_s == o.ctime_s && ctime_ns == o.ctime_ns;
  }
  bool operator!=(const FileIdentity& o) const { return !(*this == o); }
};

FileIdentity IdentityOf(const struct stat& st);

// The remembered hash of the file at `abs_path` when `dir` holds a valid record for exactly this
// identity, else nullopt.
std::optional<uint64_t> RecallContentHash(const std::string& dir, const std::string& abs_path,
                                          const FileIdentity& identity);

// Remembers `hash` for the file when its ctime is at least kSettledNs before `hashed_at_ns` (the
// realtime clock when the read began) and `identity` is what the file still has (`after`);
// returns whether a record was written. Best effort: a folder that cannot be written is no error.
bool RememberContentHash(const std::string& dir, const std::string& abs_path, const FileIdentity& identity,
                         const FileIdentity& after, uint64_t hash, int64_t hashed_at_ns);

// The realtime clock in nanoseconds (the clock file times are in).
int64_t RealtimeNowNs();

}  // namespace onyx
