// The Python line of each call that makes the host wait for the device
// (torch.cuda.synchronize(), an event's or stream's synchronize, a blocking
// copy) in the recording pass, so that a finding names the line that
// synchronizes rather than the next operator's.
//
// The wait runs with the GIL released, and CUPTI's callback is no place to
// take it back (a thread holding the GIL may be waiting on a lock the waiting
// thread holds). So the callback only notes the call on its thread, and a
// C-level profile function, which Python runs on the same thread with the GIL
// held when the builtin that waited returns, reads the stack then.
#pragma once

#include <Python.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "capture/cupti/wait_sites.h"
#include "capture/torch/python_stacks.h"

namespace magneton::capture {

class PythonWaitSites final : public WaitSites {
 public:
  explicit PythonWaitSites(PythonStacks* stacks) : stacks_(stacks) {}
  ~PythonWaitSites() override;

  // Starts or stops watching (installs or removes the profile function);
  // takes the GIL. False when another profiler is set: it is left alone and
  // the calls get no Python stack.
  bool Watch(bool on);

  void Entered(uint32_t correlation) override;
  int64_t StackOf(uint32_t correlation) override;

  // While one lives on a thread, its waits are the recorder's own (the
  // fingerprints read back), not the program's.
  class OwnWork {
   public:
    OwnWork();
    ~OwnWork();
    OwnWork(const OwnWork&) = delete;
    OwnWork& operator=(const OwnWork&) = delete;
  };

 private:
  static int Profile(PyObject* self, PyFrameObject* frame, int what, PyObject* arg);
  void SetProfile(PyObject* capsule);

  PythonStacks* stacks_;
  std::atomic<bool> watching_{false};
  std::mutex mu_;
  std::unordered_map<uint32_t, int64_t> stack_by_call_;  // correlation id -> stack, until read
};

}  // namespace magneton::capture
