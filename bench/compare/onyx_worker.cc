// The Onyx side of bench/compare: loads a model once, then answers commands on stdin so the
// driver can alternate it with ONNX Runtime run by run.
//   onyx_bench_worker MODEL THREADS OPT_LEVEL NAME=FILE.npy...
// Commands: "run" -> "ms <wall ms of one Run>"; "save DIR" -> writes outputs as DIR/<i>_<name>.npy;
// "stats" -> "rss_mb <peak RSS>"; "quit". At start it prints "ready <session creation ms>".

#include <cstdio>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <string>

#include "onyx/session.h"
#include "platform/timer.h"
#include "tensor/npy.h"

// The process's peak resident set (VmHWM in /proc/self/status), in MB.
double PeakResidentMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // "VmHWM:   1234 kB"
  return -1.0;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: onyx_bench_worker MODEL THREADS OPT_LEVEL NAME=FILE.npy...\n");
    return 2;
  }
  try {
    onyx::SessionOptions options;
    options.intra_op_num_threads = std::stoi(argv[2]);
    const std::string level = argv[3];
    options.graph_optimization_level = level == "disabled"   ? onyx::GraphOptimizationLevel::kDisabled
                                       : level == "basic"    ? onyx::GraphOptimizationLevel::kBasic
                                       : level == "extended" ? onyx::GraphOptimizationLevel::kExtended
                                                             : onyx::GraphOptimizationLevel::kAll;
    const int64_t t0 = onyx::NowNanos();
    onyx::Session session(argv[1], options);
    const double create_ms = static_cast<double>(onyx::NowNanos() - t0) / 1e6;
    onyx::NamedValues feeds;
    for (int i = 4; i < argc; ++i) {
      const std::string spec = argv[i];
      const auto eq = spec.rfind('=');
      feeds.emplace_back(spec.substr(0, eq), onyx::ReadNpy(spec.substr(eq + 1)));
    }
    std::printf("ready %.3f\n", create_ms);
    std::fflush(stdout);
    std::vector<onyx::Value> outputs;
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line == "run") {
        const int64_t r0 = onyx::NowNanos();
        outputs = session.Run(feeds);
        std::printf("ms %.4f\n", static_cast<double>(onyx::NowNanos() - r0) / 1e6);
      } else if (line.rfind("save ", 0) == 0) {
        const std::string dir = line.substr(5);
        std::filesystem::create_directories(dir);
        outputs = session.Run(feeds);
        for (size_t i = 0; i < outputs.size(); ++i) {
          std::string name = session.outputs()[i].name;
          for (char& c : name)
            if (c == '/' || c == ':') c = '_';
          onyx::WriteNpy(dir + "/" + std::to_string(i) + "_" + name + ".npy", outputs[i].tensor());
        }
        std::printf("saved\n");
      } else if (line == "stats") {
        // VmHWM, not getrusage's ru_maxrss: a forked child starts with its parent's maximum.
        std::printf("rss_mb %.1f\n", PeakResidentMb());
      } else if (line == "quit") {
        break;
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 1;
  }
  return 0;
}
