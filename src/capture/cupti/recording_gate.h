// Decides whether kernels are being recorded now. Recording is on when all
// of these hold:
//   - the user has not paused it (magneton.stop(); or --start-paused until magneton.start()),
//   - the time window is open (after --delay, for --duration),
//   - with --only-ranges, some thread is inside a matching NVTX range.
// Pure state; the tracer serializes calls and turns CUPTI collection on and
// off when active() changes.
#pragma once

#include <cstdint>
#include <limits>

namespace magneton::capture {

class RecordingGate {
 public:
  struct Config {
    bool start_paused = false;
    bool only_ranges = false;
    int64_t start_ns = 0;      // when the recording began
    int64_t delay_ns = 0;      // the window opens at start + delay
    int64_t duration_ns = -1;  // and closes duration later; -1: never
  };
  explicit RecordingGate(const Config& config);

  // Each returns true when active() changed.
  bool SetUser(bool on);
  bool EnterRange();
  bool ExitRange();
  bool Tick(int64_t now_ns);

  bool active() const { return active_; }
  bool finished() const { return window_done_; }  // the time window has closed for good
  // The next time Tick can change anything, or max() when none.
  int64_t next_deadline() const;
  int64_t range_depth() const { return depth_; }

 private:
  bool Update();

  Config config_;
  bool user_ = true;
  bool window_open_ = false, window_done_ = false;
  int64_t depth_ = 0;
  bool active_ = false;
};

}  // namespace magneton::capture
