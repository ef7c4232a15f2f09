#include "capture/cupti/recording_gate.h"

namespace magneton::capture {

RecordingGate::RecordingGate(const Config& config) : config_(config), user_(!config.start_paused) {
  Tick(config.start_ns);
  Update();
}

bool RecordingGate::Update() {
  bool now = user_ && window_open_ && (!config_.only_ranges || depth_ > 0);
  bool changed = now != active_;
  active_ = now;
  return changed;
}

bool RecordingGate::SetUser(bool on) {
  user_ = on;
  return Update();
}

bool RecordingGate::EnterRange() {
  ++depth_;
  return Update();
}

bool RecordingGate::ExitRange() {
  if (depth_ > 0) --depth_;  // a pop whose push came before the recording
  return Update();
}

bool RecordingGate::Tick(int64_t now_ns) {
  const int64_t open_at = config_.start_ns + config_.delay_ns;
  if (!window_done_) {
    window_open_ = now_ns >= open_at;
    if (config_.duration_ns >= 0 && now_ns >= open_at + config_.duration_ns) {
      window_open_ = false;
      window_done_ = true;
    }
  }
  return Update();
}

int64_t RecordingGate::next_deadline() const {
  if (window_done_) return std::numeric_limits<int64_t>::max();
  const int64_t open_at = config_.start_ns + config_.delay_ns;
  if (!window_open_) return open_at;
  if (config_.duration_ns >= 0) return open_at + config_.duration_ns;
  return std::numeric_limits<int64_t>::max();
}

}  // namespace magneton::capture
