// Reading threads and CPU time back from the OS (Linux /proc and getrusage), so threading tests
// check what the kernel saw rather than what the pool says about itself.
#pragma once

#include <sched.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace onyx::test {

// Threads of this process right now.
inline int ProcessThreadCount() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}

// An exited thread can linger in /proc for a moment after join: poll until the count matches.
inline int WaitForThreadCount(int expected, int timeout_ms = 2000) {
  int n = ProcessThreadCount();
  for (int waited = 0; n != expected && waited < timeout_ms; waited += 5) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    n = ProcessThreadCount();
  }
  return n;
}

// The thread count once threads that other tests joined have left /proc: two equal readings
// 20 ms apart.
inline int SettledThreadCount() {
  int n = ProcessThreadCount();
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int again = ProcessThreadCount();
    if (again == n) return n;
    n = again;
  }
  return n;
}

// CPU time a thread of this process has run, in ns (first field of its schedstat).
inline int64_t ThreadCpuNanos(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  int64_t ns = -1;
  in >> ns;
  return ns;
}

// User + system CPU time of the whole process, in ns.
inline int64_t ProcessCpuNanos() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  auto ns = [](const timeval& tv) { return int64_t{tv.tv_sec} * 1000000000 + int64_t{tv.tv_usec} * 1000; };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

// Cores this process gets right now: `threads` threads spin for 200 ms; CPU time / wall time.
inline double CoresAvailable(int threads) {
  const int64_t cpu0 = ProcessCpuNanos();
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::milliseconds(200);
  std::vector<std::thread> spinners;
  for (int i = 0; i < threads; ++i)
    spinners.emplace_back([until] {
      while (std::chrono::steady_clock::now() < until) {
      }
    });
  for (auto& t : spinners) t.join();
  const double wall = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(ProcessCpuNanos() - cpu0) / wall;
}

// Processors (0-based) a thread of this process may run on, straight from sched_getaffinity.
inline std::vector<int> AffinityOf(int tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(tid, sizeof(set), &set) != 0) return cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) cpus.push_back(i);
  return cpus;
}

// Physical cores among the processors this process may use, from sysfs topology: distinct
// (package, core) pairs.
inline int PhysicalCoresFromSysfs() {
  const std::vector<int> cpus = AffinityOf(0);
  std::set<std::pair<std::string, std::string>> cores;
  for (int cpu : cpus) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream package(dir + "physical_package_id"), core(dir + "core_id");
    std::string p, c;
    if (!(package >> p) || !(core >> c)) return static_cast<int>(cpus.size());
    cores.insert({p, c});
  }
  return cores.empty() ? 1 : static_cast<int>(cores.size());
}

}  // namespace onyx::test
