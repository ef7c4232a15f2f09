#include "energy/measure_command.h"

#include <thread>

#include "energy/clock.h"
#include "energy/live_series.h"

namespace magneton::energy {

namespace {

// Waits (up to `timeout_ms`) until every energy counter has a reading that
// `ready` accepts: counters update about every 100 ms.
template <class Ready>
void AwaitCounters(LiveSeries& live, int timeout_ms, Ready ready) {
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    Run run = live.Snapshot();
    bool all = true;
    for (const SensorSeries& s : run.series)
      if (s.sensor == "energy.total" && !ready(s)) all = false;
    if (all) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

double AddableJoules(const std::vector<DeviceWindowEnergy>& devices) {
  double j = 0;
  for (const auto& d : devices)
    if (!d.estimate && (d.device.kind == "gpu" || (d.device.kind == "cpu" && d.device.ordinal >= 0))) j += d.joules;
  return j;
}

Result<CommandEnergy> MeasureCommand(const std::vector<std::string>& argv, const SamplerOptions& options,
                                     int* exit_code) {
  SamplerOptions opts = options;
  // CPU time comes exactly from the command's rusage (its whole waited-for
  // tree), which procfs sampling of one pid would undercount.
  opts.procfs = false;
  LiveSeries live(opts);
  // The first counter reading only says when sampling began; one update after
  // it anchors the start (the curve does not anchor on the first reading).
  AwaitCounters(live, 300, [](const SensorSeries& s) { return s.t_ns.size() >= 2; });

  CommandEnergy out;
  out.argv = argv;
  out.cpu_watts_per_core = options.cpu_watts_per_core;
  auto child = ChildProcess::Spawn(argv, exit_code);
  if (!child.ok()) return child.error();
  out.start_ns = child->start_ns();
  out.exit = child->Wait();
  out.end_ns = out.exit.end_ns;
  // A counter update after the exit brackets the end.
  int64_t end = out.end_ns;
  AwaitCounters(live, 300, [end](const SensorSeries& s) { return !s.t_ns.empty() && s.t_ns.back() > end; });
  live.Stop();
  out.series = live.Snapshot();
  out.problems = live.problems();
  for (const Stat& s : out.series.stats) out.problems.push_back(s);
  out.devices = WindowEnergy(out.series, out.start_ns, out.end_ns);
  for (const auto& d : out.devices) out.energy_available = out.energy_available || !d.estimate;
  if (!out.energy_available) out.unavailable_reason = live.why_no_energy();
  return out;
}

}  // namespace magneton::energy
