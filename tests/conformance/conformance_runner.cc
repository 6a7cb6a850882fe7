// Runs every ONNX test folder of a suite, each in a child process (a crash or hang fails that
// test only), and checks the results against an expectations file listing known failures:
//   test_name   one-line reason
// The run fails when an unlisted test fails or a listed test passes, so the list only shrinks.
// A name written ~test_name is a test whose expected values are one random draw the op makes
// differently (an unseeded random op): it fails, except when the draw happens to match (about
// 1 run in 160 for Bernoulli's 10 values), and such a chance pass is reported without failing.
// Prints "N passed, N failed" last. Exit 77 (ctest's skip) when the suite folder is absent.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "testing/test_folder.h"

namespace fs = std::filesystem;

namespace {

struct Args {
  std::string suite;
  std::string expectations;
  std::string filter;
  std::string write_expectations;
  int timeout_s = 300;
  std::string opt_level = "all";
  std::string execution_mode = "sequential";
  int jobs = 2;
  bool verbose = false;
};

std::string g_opt_level = "all";  // read by forked children
bool g_parallel = false;          // read by forked children

onyx::GraphOptimizationLevel LevelOf(const std::string& text) {
  if (text == "disabled") return onyx::GraphOptimizationLevel::kDisabled;
  if (text == "basic") return onyx::GraphOptimizationLevel::kBasic;
  if (text == "extended") return onyx::GraphOptimizationLevel::kExtended;
  if (text == "all") return onyx::GraphOptimizationLevel::kAll;
  std::fprintf(stderr, "unknown --opt-level %s\n", text.c_str());
  std::exit(2);
}

struct Outcome {
  bool passed = false;
  std::string message;
};

struct Expectation {
  std::string reason;
  bool chance_pass = false;  // listed as ~name
};

std::map<std::string, Expectation> ReadExpectations(const std::string& path) {
  std::map<std::string, Expectation> result;
  if (path.empty()) return result;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const auto end = line.find_first_of(" \t", start);
    std::string name = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string reason = end == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", end));
    const bool chance_pass = name.size() > 1 && name[0] == '~';
    if (chance_pass) name.erase(0, 1);
    result[name] = {reason, chance_pass};
  }
  return result;
}

std::string OneLine(std::string s, size_t max_len = 300) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > max_len) s = s.substr(0, max_len) + "...";
  return s;
}

struct Child {
  pid_t pid;
  int fd;
  std::string test;
  std::string output;
  std::chrono::steady_clock::time_point start;
};

// Forks a child that runs one test folder and writes "P" or "F<message>" to a pipe.
Child StartTest(const std::string& suite, const std::string& test) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    std::exit(2);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    onyx::SessionOptions options;
    options.intra_op_num_threads = 1;
    options.graph_optimization_level = LevelOf(g_opt_level);
    if (g_parallel) {
      options.execution_mode = onyx::ExecutionMode::kParallel;
      options.inter_op_num_threads = 2;
    }
    std::string out;
    try {
      const auto r = onyx::testing::RunTestFolder((fs::path(suite) / test).string(), options);
      // append, not "F" + ...: g++ 12's -Wrestrict misreads literal + std::string&&.
      out = r.passed() ? std::string("P") : std::string("F").append(r.FirstFailure());
    } catch (const std::exception& e) {
      out = std::string("F") + e.what();
    }
    size_t written = 0;
    while (written < out.size()) {
      const ssize_t w = write(fds[1], out.data() + written, out.size() - written);
      if (w <= 0) break;
      written += static_cast<size_t>(w);
    }
    _exit(0);
  }
  close(fds[1]);
  return Child{pid, fds[0], test, "", std::chrono::steady_clock::now()};
}

Outcome FinishChild(Child& c, bool timed_out, int timeout_s) {
  if (timed_out) {
    kill(c.pid, SIGKILL);
    waitpid(c.pid, nullptr, 0);
    close(c.fd);
    return {false, "timed out after " + std::to_string(timeout_s) + " s"};
  }
  int status = 0;
  waitpid(c.pid, &status, 0);
  close(c.fd);
  if (WIFSIGNALED(status)) return {false, std::string("crashed: ") + strsignal(WTERMSIG(status))};
  if (c.output.empty()) return {false, "the test process ended without a result"};
  if (c.output[0] == 'P') return {true, ""};
  return {false, c.output.substr(1)};
}

std::map<std::string, Outcome> RunAll(const Args& args, const std::vector<std::string>& tests) {
  std::map<std::string, Outcome> outcomes;
  std::vector<Child> running;
  size_t next = 0;
  while (next < tests.size() || !running.empty()) {
    while (next < tests.size() && static_cast<int>(running.size()) < args.jobs)
      running.push_back(StartTest(args.suite, tests[next++]));
    std::vector<pollfd> pfds;
    for (auto& c : running) pfds.push_back(pollfd{c.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 200);
    for (size_t i = running.size(); i-- > 0;) {
      Child& c = running[i];
      bool done = false;
      if (pfds[i].revents & (POLLIN | POLLHUP)) {
        char buf[4096];
        const ssize_t n = read(c.fd, buf, sizeof(buf));
        if (n > 0) c.output.append(buf, static_cast<size_t>(n));
        else done = true;
      }
      const bool timed_out = std::chrono::steady_clock::now() - c.start > std::chrono::seconds(args.timeout_s);
      if (done || timed_out) {
        outcomes[c.test] = FinishChild(c, timed_out && !done, args.timeout_s);
        if (args.verbose)
          std::printf("%s %s %s\n", outcomes[c.test].passed ? "PASS" : "FAIL", c.test.c_str(),
                      OneLine(outcomes[c.test].message).c_str());
        running.erase(running.begin() + static_cast<long>(i));
      }
    }
  }
  return outcomes;
}

int Usage() {
  std::fprintf(stderr,
               "usage: onyx_conformance --suite DIR [--expect FILE] [--filter SUBSTR] [--timeout S] [--jobs N]\n"
               "                        [--verbose] [--write-expectations FILE] [--opt-level disabled|basic|extended|all]\n"
               "                        [--execution-mode sequential|parallel]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--suite") args.suite = value();
    else if (a == "--expect") args.expectations = value();
    else if (a == "--filter") args.filter = value();
    else if (a == "--timeout") args.timeout_s = std::stoi(value());
    else if (a == "--jobs") args.jobs = std::max(1, std::stoi(value()));
    else if (a == "--write-expectations") args.write_expectations = value();
    else if (a == "--verbose") args.verbose = true;
    else if (a == "--opt-level") args.opt_level = value();
    else if (a == "--execution-mode") args.execution_mode = value();
    else return Usage();
  }
  if (args.suite.empty()) return Usage();
  g_opt_level = args.opt_level;
  LevelOf(g_opt_level);
  if (args.execution_mode != "sequential" && args.execution_mode != "parallel") return Usage();
  g_parallel = args.execution_mode == "parallel";
  if (!fs::is_directory(args.suite)) {
    std::printf("SKIP: conformance suite %s is absent\n", args.suite.c_str());
    return 77;
  }
  std::vector<std::string> tests;
  for (const auto& entry : fs::directory_iterator(args.suite)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !fs::exists(entry.path() / "model.onnx")) continue;
    if (!args.filter.empty() && name.find(args.filter) == std::string::npos) continue;
    tests.push_back(name);
  }
  std::sort(tests.begin(), tests.end());
  const auto expected = ReadExpectations(args.expectations);
  const auto outcomes = RunAll(args, tests);
  if (g_parallel) std::printf("execution mode: parallel (2 inter-op threads)\n");

  int passed = 0, failed = 0, unexpected_failures = 0, unexpected_passes = 0;
  std::set<std::string> seen;
  for (const auto& [test, outcome] : outcomes) {
    seen.insert(test);
    const bool listed = expected.count(test) != 0;
    if (outcome.passed) {
      ++passed;
      if (listed && expected.at(test).chance_pass) {
        std::printf("CHANCE PASS %s (listed as a random draw: %s)\n", test.c_str(), expected.at(test).reason.c_str());
      } else if (listed) {
        ++unexpected_passes;
        std::printf("UNEXPECTED PASS %s (listed: %s) - remove it from the expectations file\n", test.c_str(),
                    expected.at(test).reason.c_str());
      }
    } else {
      ++failed;
      if (!listed) {
        ++unexpected_failures;
        std::printf("FAIL %s: %s\n", test.c_str(), OneLine(outcome.message).c_str());
      }
    }
  }
  int stale = 0;
  if (args.filter.empty()) {
    for (const auto& [test, reason] : expected)
      if (!seen.count(test)) {
        ++stale;
        std::printf("STALE expectation %s: no such test in %s\n", test.c_str(), args.suite.c_str());
      }
  }
  if (!args.write_expectations.empty()) {
    std::ofstream out(args.write_expectations);
    out << "# Known failures of " << fs::path(args.suite).filename().string()
        << ": test name, then why it fails. This list only shrinks.\n";
    for (const auto& [test, outcome] : outcomes) {
      const auto it = expected.find(test);
      if (it != expected.end() && it->second.chance_pass)
        out << "~" << test << "  " << it->second.reason << "\n";
      else if (!outcome.passed)
        out << test << "  " << (it != expected.end() ? it->second.reason : OneLine(outcome.message, 160)) << "\n";
    }
  }
  std::printf("%s (optimization %s): %zu tests, %d expected failures, %d unexpected failures, %d unexpected passes, %d stale\n",
              args.suite.c_str(), args.opt_level.c_str(), outcomes.size(), failed - unexpected_failures, unexpected_failures,
              unexpected_passes, stale);
  std::printf("%d passed, %d failed\n", passed, failed);
  return (unexpected_failures || unexpected_passes || stale) ? 1 : 0;
}
