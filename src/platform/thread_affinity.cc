#include "platform/thread_affinity.h"

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "base/check.h"

namespace onyx {
namespace {

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  for (;;) {
    const auto at = s.find(sep, start);
    parts.push_back(Trim(s.substr(start, at == std::string::npos ? std::string::npos : at - start)));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

int ParseId(const std::string& text, const std::string& entry) {
  const bool digits = !text.empty() && text.size() <= 6 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
  ONYX_CHECK(digits, kInvalidArgument, "thread affinity entry '", entry, "': '", text,
             "' is not a processor id (ids count from 1)");
  const int id = std::stoi(text);
  ONYX_CHECK(id >= 1, kInvalidArgument, "thread affinity entry '", entry, "': processor ids count from 1, got ", id);
  return id;
}

std::string Describe(const std::vector<int>& zero_based) {
  std::vector<int> ids;
  for (int p : zero_based) ids.push_back(p + 1);
  return StrJoin(ids, ",");
}

}  // namespace

std::vector<std::vector<int>> ParseThreadAffinities(const std::string& text) {
  const std::vector<int> available = AvailableProcessors();
  std::vector<std::vector<int>> result;
  for (const std::string& entry : Split(text, ';')) {
    ONYX_CHECK(!entry.empty(), kInvalidArgument, "thread affinities '", text,
               "': an empty entry (one entry per worker thread, separated by ';')");
    std::vector<int> cpus;
    for (const std::string& item : Split(entry, ',')) {
      const auto dash = item.find('-');
      int lo, hi;
      if (dash == std::string::npos) {
        lo = hi = ParseId(item, entry);
      } else {
        lo = ParseId(Trim(item.substr(0, dash)), entry);
        hi = ParseId(Trim(item.substr(dash + 1)), entry);
        ONYX_CHECK(lo <= hi, kInvalidArgument, "thread affinity entry '", entry, "': range ", lo, "-", hi,
                   " is reversed");
      }
      for (int id = lo; id <= hi; ++id) {
        ONYX_CHECK(std::binary_search(available.begin(), available.end(), id - 1), kInvalidArgument,
                   "thread affinity entry '", entry, "': processor ", id,
                   " is not available to this process (available: ", Describe(available), ")");
        if (std::find(cpus.begin(), cpus.end(), id - 1) == cpus.end()) cpus.push_back(id - 1);
      }
    }
    std::sort(cpus.begin(), cpus.end());
    result.push_back(std::move(cpus));
  }
  return result;
}

std::vector<int> AvailableProcessors() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> ids;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return ids;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) ids.push_back(i);
  return ids;
}

bool SetCurrentThreadAffinity(const std::vector<int>& processors) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int p : processors)
    if (p >= 0 && p < CPU_SETSIZE) CPU_SET(p, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

std::vector<int> GetThreadAffinity(int thread_id) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> ids;
  if (sched_getaffinity(static_cast<pid_t>(thread_id), sizeof(set), &set) != 0) return ids;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) ids.push_back(i);
  return ids;
}

int CurrentThreadId() { return static_cast<int>(syscall(SYS_gettid)); }

}  // namespace onyx
