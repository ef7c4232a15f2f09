#include "energy/monitor.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include "energy/clock.h"

namespace magneton::energy {

double Measurement::measured_j() const {
  double j = 0;
  for (const auto& d : devices)
    if (!d.estimate) j += d.joules;
  return j;
}

Monitor::Monitor(const SamplerOptions& options)
    : live_(options), retain_ns_(static_cast<int64_t>(options.retain_s * 1e9)) {}
Monitor::~Monitor() { live_.Stop(); }

Status Monitor::BeginWindow(const std::string& name) {
  if (open_.count(name)) return MakeError(ErrorCode::kInvalidArgument, "window '" + name + "' is already open");
  int64_t now = NowNs();
  // Only between windows, and only readings older than the retention: a
  // caller may still read a finished window's readings through Snapshot()
  // (forgetting all but the last second here once lost a 10 s window's).
  if (open_.empty() && retain_ns_ > 0) live_.Forget(now - retain_ns_);
  open_[name] = now;
  return Status::Ok();
}

Result<Measurement> Monitor::EndWindow(const std::string& name, bool settle) {
  int64_t end = NowNs();
  auto it = open_.find(name);
  if (it == open_.end()) return MakeError(ErrorCode::kInvalidArgument, "no open window named '" + name + "'");
  Measurement m;
  m.name = name;
  m.start_ns = it->second;
  m.end_ns = end;
  m.time_s = double(end - m.start_ns) * 1e-9;
  open_.erase(it);
  Run run = live_.Snapshot();
  if (settle) {
    // Counters update about every 100 ms; wait for one reading past `end`.
    for (int tries = 0; tries < 30; ++tries) {
      bool all = true;
      for (const SensorSeries& s : run.series)
        if (s.sensor == "energy.total" && (s.t_ns.empty() || s.t_ns.back() <= end)) all = false;
      if (all) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      run = live_.Snapshot();
    }
  }
  m.devices = WindowEnergy(run, m.start_ns, m.end_ns);
  for (const auto& d : m.devices) m.available = m.available || !d.estimate;
  if (!m.available) m.reason = live_.why_no_energy();
  Range r;
  r.id = static_cast<int64_t>(done_.size());
  r.name = name;
  r.domain = kMagnetonDomain;
  r.thread = static_cast<int64_t>(syscall(SYS_gettid));
  r.start_ns = m.start_ns;
  r.end_ns = m.end_ns;
  done_.push_back(r);
  return m;
}

std::vector<std::string> Monitor::OpenWindows() const {
  std::vector<std::string> names;
  for (const auto& [name, start] : open_) names.push_back(name);
  return names;
}

}  // namespace magneton::energy
