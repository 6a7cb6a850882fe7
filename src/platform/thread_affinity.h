// Thread affinity in ONNX Runtime's format: "1,2;3-4" pins the first worker to processors 1 and
// 2 and the second to 3 and 4. Processor ids in the text count from 1 (ONNX Runtime's logical
// processor ids); the parsed lists count from 0, as the OS does.
#pragma once

#include <string>
#include <vector>

namespace onyx {

// One list of 0-based processor ids per worker. Throws Error(kInvalidArgument) naming the bad
// entry: empty entries, ids below 1, reversed ranges, ids the process may not run on.
std::vector<std::vector<int>> ParseThreadAffinities(const std::string& text);

// The 0-based processors this process may run on.
std::vector<int> AvailableProcessors();

// Pins the calling thread; returns false when the OS refuses.
bool SetCurrentThreadAffinity(const std::vector<int>& processors);

// The processors a thread of this process (Linux thread id) may run on; empty on failure.
std::vector<int> GetThreadAffinity(int thread_id);

// The calling thread's Linux thread id.
int CurrentThreadId();

}  // namespace onyx
