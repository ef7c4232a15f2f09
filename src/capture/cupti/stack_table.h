// Native call stacks at kernel launches (--stacks).
//
// The launch callback only walks the stack and interns the return addresses
// (a hash lookup); symbolizing (dladdr + demangling) happens later on the
// writer's thread, once per distinct stack, so the host pays little per launch.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/run.h"
#include "core/status.h"

namespace magneton {
class RunWriter;
}

namespace magneton::capture {

// Return addresses of the calling thread, innermost first; at most `max`.
int CaptureStack(uintptr_t* ips, int max);
// Which unwinder CaptureStack uses: "libunwind" (libunwind.so.8, loaded at run
// time when present) or "glibc backtrace".
const char* StackUnwinder();

class StackTable {
 public:
  // `skip_modules`: innermost frames whose shared object path contains one of
  // these are dropped (the tracer and CUPTI's own callback frames).
  explicit StackTable(std::vector<std::string> skip_modules = {}, int64_t first_frame_id = 0,
                      int64_t first_stack_id = 0);

  // Any thread. The index of this stack, the same for the same addresses.
  uint32_t Intern(const uintptr_t* ips, int n);

  // Writer's thread: symbolizes the stacks interned since the last call and
  // writes their new Frames and Stacks.
  Status WriteNew(RunWriter* writer);
  // Writer's thread: the run's Stack id for an interned index; kNone until written.
  int64_t RunId(uint32_t index) const;

  int64_t interned() const;        // distinct address lists
  int64_t frames_written() const { return next_frame_; }
  int64_t stacks_written() const { return next_stack_; }

 private:
  std::vector<int64_t> Symbolize(const std::vector<uintptr_t>& ips, std::vector<Frame>* new_frames);

  const std::vector<std::string> skip_modules_;
  mutable std::mutex mu_;
  std::vector<std::vector<uintptr_t>> stacks_;             // by index
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;

  // Writer's thread only.
  std::vector<int64_t> run_ids_;                           // by index
  std::map<std::string, int64_t> frame_ids_;               // module '\0' function -> Frame id
  std::map<std::vector<int64_t>, int64_t> stack_ids_;      // frames -> Stack id
  int64_t next_frame_, next_stack_;
};

}  // namespace magneton::capture
