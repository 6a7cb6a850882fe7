// Runs the steps of a plan as a dependency graph (ONNX Runtime's ORT_PARALLEL): a step starts
// once every step it reads from has finished, on as many lanes as the inter-op pool has threads
// and the graph has independent branches. Knows nothing of values: the caller's run_step does
// the work (and releases what it no longer needs).
#pragma once

#include <functional>
#include <vector>

namespace onyx {

class ThreadPool;

struct StepGraph {
  std::vector<std::vector<int>> successors;  // steps that read what each step writes
  std::vector<int> num_predecessors;
  // Most steps at one depth (longest path from a source): how many lanes can be busy at once.
  int width = 1;

  // From each step's predecessors (step indices, duplicates allowed); every predecessor must
  // come before its step, as in a topological order.
  static StepGraph FromPredecessors(const std::vector<std::vector<int>>& predecessors);
};

// Calls run_step(i) for every step, each after its predecessors, on up to pool->num_threads()
// threads at once (the caller is one of them). The first exception a step throws stops new
// steps from starting; steps already running finish, then it is rethrown.
void RunStepGraph(ThreadPool* pool, const StepGraph& graph, const std::function<void(int step)>& run_step);

}  // namespace onyx
