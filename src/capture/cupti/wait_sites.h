// Where the program's waits for the device come from, for a recorder that
// knows more of the calling thread than its native stack: the torch
// recorder knows its Python stack (capture/torch/python_wait_sites.h). The
// tracer calls Entered at the entry of each call that can wait
// (launch_callbacks.cpp) and asks StackOf when it writes that call's row.
#pragma once

#include <cstdint>

namespace magneton::capture {

class WaitSites {
 public:
  virtual ~WaitSites() = default;
  // On the calling thread, inside CUPTI's callback: cheap, and it must take
  // no lock the program could hold (the GIL above all).
  virtual void Entered(uint32_t correlation) = 0;
  // The tracer's writer thread: the run's Stack id of that call, or a
  // negative value (kNone) when none is known.
  virtual int64_t StackOf(uint32_t correlation) = 0;
};

}  // namespace magneton::capture
