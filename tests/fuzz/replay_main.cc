// Runs a fuzz harness without libFuzzer: LLVMFuzzerTestOneInput on every file of the folders
// (searched recursively, in name order) and files given, so a g++ build (the sanitize preset,
// CI) replays the regression inputs and the seed corpus. A crash or sanitizer report ends the
// process as it would under libFuzzer; an exception escaping the harness is reported with the
// input's path and exits 1. Prints how many inputs ran.
//   onyx_replay_<harness> [-runs=N] [-max_total_time=S] PATH...
// -runs and -max_total_time bound a replay of a large corpus (the files past the bound are
// skipped, and the count says so); other -flags are libFuzzer's and are ignored.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  long long max_runs = -1;
  double max_seconds = -1;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-runs=", 0) == 0) {
      max_runs = std::stoll(arg.substr(6));
    } else if (arg.rfind("-max_total_time=", 0) == 0) {
      max_seconds = std::stod(arg.substr(16));
    } else if (arg.rfind("-", 0) == 0) {
      continue;
    } else if (fs::is_directory(arg)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) found.push_back(entry.path());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: no file or folder '%s'\n", arg.c_str());
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  size_t ran = 0;
  for (const fs::path& path : files) {
    if (max_runs >= 0 && static_cast<long long>(ran) >= max_runs) break;
    if (max_seconds >= 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > max_seconds)
      break;
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "replay: %s: uncaught exception: %s\n", path.c_str(), e.what());
      return 1;
    } catch (...) {
      std::fprintf(stderr, "replay: %s: uncaught exception of unknown type\n", path.c_str());
      return 1;
    }
    ++ran;
  }
  std::printf("replay: ran %zu of %zu inputs\n", ran, files.size());
  return 0;
}
