// Python call stacks of recorded ops, deduplicated into Frame and Stack rows.
// Torch's Python bindings release the GIL before entering ATen, so a stack is
// read by re-taking the GIL on threads that have a Python thread state (the
// thread that called the op); other threads (autograd workers) get no stack.
#pragma once

#include <Python.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/run.h"

namespace magneton::capture {

class PythonStacks {
 public:
  explicit PythonStacks(int max_depth = 64) : max_depth_(max_depth) {}
  ~PythonStacks();

  // The stack id of the calling thread's current Python stack (innermost
  // first), or kNone when the thread runs no Python. Thread-safe. Must be
  // called without the recorder's lock held (it may take the GIL).
  int64_t Capture();

  // The rows made since the last call, to write (they stay for deduplication).
  void TakeNew(std::vector<Frame>* frames, std::vector<Stack>* stacks);
  int64_t frame_count();
  int64_t stack_count();

 private:
  int64_t CaptureWithGil();
  int64_t FrameId(PyCodeObject* code, int line);
  int64_t FrameAt(PyFrameObject* frame, PyCodeObject* code);

  struct VecHash {
    size_t operator()(const std::vector<int64_t>& v) const noexcept;
  };
  struct InstrHash {
    size_t operator()(const std::pair<PyCodeObject*, int>& k) const noexcept {
      return std::hash<const void*>()(k.first) ^ (static_cast<size_t>(k.second) * 0x9e3779b97f4a7c15ULL);
    }
  };

  int max_depth_;
  std::mutex mu_;
  std::map<std::pair<PyCodeObject*, int>, int64_t> frame_ids_;  // (code, line); holds a reference to each code object
  // (code, instruction offset) -> frame: computing a line number scans the
  // code's line table, so it is done once per call site instruction.
  std::unordered_map<std::pair<PyCodeObject*, int>, int64_t, InstrHash> instr_ids_;
  std::unordered_map<std::vector<int64_t>, int64_t, VecHash> stack_ids_;
  std::vector<Frame> frames_;
  std::vector<Stack> stacks_;
  size_t frames_taken_ = 0, stacks_taken_ = 0;
};

}  // namespace magneton::capture
