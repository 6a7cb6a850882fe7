#include "thread_flags.h"

#include "base/check.h"

namespace onyx::cli {

void AddThreadFlags(CLI::App* cmd, ThreadFlags& flags) {
  cmd->add_option("--threads", flags.threads,
                  "Intra-op threads, the calling thread included (0 = one per physical core)");
  cmd->add_option("--inter-threads", flags.inter_threads,
                  "Threads running independent nodes with --parallel (0 = one per physical core)");
  cmd->add_flag("--parallel", flags.parallel, "Run independent branches of the graph at once (ORT_PARALLEL)");
  cmd->add_option("--config", flags.config,
                  "KEY=VALUE session config entry, e.g. session.intra_op.allow_spinning=0, "
                  "session.intra_op_thread_affinities=\"1;2\", session.dynamic_block_base=4; repeatable");
}

void ApplyThreadFlags(const ThreadFlags& flags, SessionOptions& options) {
  options.intra_op_num_threads = flags.threads;
  options.inter_op_num_threads = flags.inter_threads;
  options.execution_mode = flags.parallel ? ExecutionMode::kParallel : ExecutionMode::kSequential;
  for (const std::string& entry : flags.config) {
    const auto eq = entry.find('=');
    ONYX_CHECK(eq != std::string::npos && eq > 0, kInvalidArgument, "--config wants KEY=VALUE, got '", entry, "'");
    options.config_entries[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
}

}  // namespace onyx::cli
