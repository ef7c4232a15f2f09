// Running a command the way `time` and `perf stat` do: it inherits stdin,
// stdout and stderr untouched, signals sent to Magneton are passed on, and its
// exit status comes back exactly.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace magneton::energy {

struct ChildExit {
  int exit_code = 0;       // the code to exit with: the child's, or 128+signal when a signal killed it
  int signal = 0;          // the signal that killed it (0: it exited)
  double user_s = 0, system_s = 0;  // CPU time of it and the descendants it waited for (rusage)
  int64_t max_rss_kb = 0;
  int64_t end_ns = 0;      // clock.h time when it was reaped
};

class ChildProcess {
 public:
  // Starts argv[0] (looked up in PATH). The error names the command and says
  // why it could not run; `exit_code_on_error` is then 127 (not found) or 126.
  static Result<ChildProcess> Spawn(const std::vector<std::string>& argv, int* exit_code_on_error);
  pid_t pid() const { return pid_; }
  int64_t start_ns() const { return start_ns_; }
  // Waits for the child, forwarding SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
  // SIGUSR2 and SIGWINCH that were sent to Magneton by another process. Ones
  // from the terminal (Ctrl-C) already reached the child, which shares the
  // foreground process group, so they are not sent twice.
  ChildExit Wait();

 private:
  pid_t pid_ = -1;
  int64_t start_ns_ = 0;
};

// Runs argv with stdout captured (stderr discarded) for at most `timeout_s`;
// the child is killed past it. For short probes (`magneton doctor`).
struct Captured {
  std::string out;
  int exit_code = 0;
  bool timed_out = false;
};
Result<Captured> RunCaptured(const std::vector<std::string>& argv, double timeout_s);

}  // namespace magneton::energy
