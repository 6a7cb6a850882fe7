#include "runtime/creation_cache_hash_memo.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

#include "base/hash64.h"

namespace onyx {

namespace {

namespace fs = std::filesystem;

constexpr char kMemoMagic[8] = {'O', 'N', 'Y', 'X', 'F', 'H', '0', '1'};
constexpr size_t kMaxRecordBytes = size_t{64} << 10;  // paths are shorter than this

std::string MemoPath(const std::string& dir, const std::string& abs_path) {
  char name[48];
  std::snprintf(name, sizeof(name), "onyx-file-%016llx.hash",
                static_cast<unsigned long long>(Hash64(abs_path.data(), abs_path.size())));
  return (fs::path(dir) / name).string();
}

void AppendU64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof(v)); }

// The record without its checksum.
std::string RecordBody(const std::string& abs_path, const FileIdentity& id, uint64_t hash) {
  std::string out(kMemoMagic, sizeof(kMemoMagic));
  for (uint64_t v : {id.size, id.inode, id.device, static_cast<uint64_t>(id.mtime_s), static_cast<uint64_t>(id.mtime_ns),
                     static_cast<uint64_t>(id.ctime_s), static_cast<uint64_t>(id.ctime_ns), hash,
                     static_cast<uint64_t>(abs_path.size())})
    AppendU64(out, v);
  out += abs_path;
  return out;
}

}  // namespace

FileIdentity IdentityOf(const struct stat& st) {
  FileIdentity id;
  id.size = static_cast<uint64_t>(st.st_size);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.device = static_cast<uint64_t>(st.st_dev);
  id.mtime_s = st.st_mtim.tv_sec;
  id.mtime_ns = st.st_mtim.tv_nsec;
  id.ctime_s = st.st_ctim.tv_sec;
  id.ctime_ns = st.st_ctim.tv_nsec;
  return id;
}

int64_t RealtimeNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::optional<uint64_t> RecallContentHash(const std::string& dir, const std::string& abs_path,
                                          const FileIdentity& identity) {
  const int fd = ::open(MemoPath(dir, abs_path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const size_t want = RecordBody(abs_path, identity, 0).size() + sizeof(uint64_t);
  std::vector<char> record(want + 1);  // one more: a longer file is not this record
  ssize_t got = 0;
  do {
    got = ::pread(fd, record.data(), record.size(), 0);
  } while (got < 0 && errno == EINTR);
  ::close(fd);
  if (got != static_cast<ssize_t>(want) || want > kMaxRecordBytes) return std::nullopt;
  const size_t body = want - sizeof(uint64_t);
  uint64_t checksum = 0, hash = 0;
  std::memcpy(&checksum, record.data() + body, sizeof(checksum));
  if (checksum != Hash64(record.data(), body)) return std::nullopt;
  std::memcpy(&hash, record.data() + sizeof(kMemoMagic) + 7 * sizeof(uint64_t), sizeof(hash));
  // The record must be exactly the one this identity and path would make.
  if (RecordBody(abs_path, identity, hash) != std::string(record.data(), body)) return std::nullopt;
  return hash;
}

bool RememberContentHash(const std::string& dir, const std::string& abs_path, const FileIdentity& identity,
                         const FileIdentity& after, uint64_t hash, int64_t hashed_at_ns) {
  if (identity != after) return false;  // changed while it was read
  const int64_t ctime_ns = identity.ctime_s * 1000000000 + identity.ctime_ns;
  if (hashed_at_ns - ctime_ns < kSettledNs) return false;  // too recently changed to trust its times
  std::string record = RecordBody(abs_path, identity, hash);
  if (record.size() + sizeof(uint64_t) > kMaxRecordBytes) return false;
  AppendU64(record, Hash64(record.data(), record.size()));
  std::error_code ec;
  fs::create_directories(dir, ec);
  static std::atomic<unsigned> counter{0};
  const std::string final_path = MemoPath(dir, abs_path);
  const std::string tmp = final_path + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool written = ::write(fd, record.data(), record.size()) == static_cast<ssize_t>(record.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(tmp.c_str(), final_path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace onyx
