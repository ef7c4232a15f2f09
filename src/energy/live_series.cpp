#include "energy/live_series.h"

#include <algorithm>

#include "core/stats_registry.h"
#include "energy/energy_curve.h"

namespace magneton::energy {

LiveSeries::LiveSeries(const SamplerOptions& options) {
  for (auto& s : OpenSamplers(options, &problems_)) {
    Status st = Add(std::move(s));
    if (!st.ok()) problems_.push_back(MakeStat(stats::kSamplerStartFailed, 1, st.message()));
  }
}

LiveSeries::~LiveSeries() { Stop(); }

Status LiveSeries::Add(std::unique_ptr<Sampler> sampler) {
  SampleSink* sink = nullptr;
  {
    std::lock_guard lock(mu_);
    buffer_.Drain(&run_);  // series ids must continue densely after the drained ones
    auto attached = buffer_.Attach(*sampler, &run_);
    if (!attached.ok()) return attached.status();
    sink = *attached;
  }
  MAGNETON_RETURN_IF_ERROR(sampler->Start(sink));
  std::lock_guard lock(mu_);
  samplers_.push_back(std::move(sampler));
  return Status::Ok();
}

void LiveSeries::Stop() {
  std::vector<Sampler*> samplers;
  {
    std::lock_guard lock(mu_);
    for (auto& s : samplers_) samplers.push_back(s.get());
  }
  for (Sampler* s : samplers) s->Stop();
}

Run LiveSeries::Snapshot() {
  std::lock_guard lock(mu_);
  buffer_.Drain(&run_);
  return run_;
}

void LiveSeries::Forget(int64_t before_ns) {
  std::lock_guard lock(mu_);
  buffer_.Drain(&run_);
  for (SensorSeries& s : run_.series) {
    auto it = std::upper_bound(s.t_ns.begin(), s.t_ns.end(), before_ns);
    size_t drop = static_cast<size_t>(it - s.t_ns.begin());
    if (drop <= 1) continue;
    // Keep the last reading at or before `before_ns`, and for an energy counter
    // one more, so the reading at `before_ns` stays interpolable.
    size_t keep_from = drop - (s.sensor == "energy.total" && drop >= 2 ? 2 : 1);
    s.t_ns.erase(s.t_ns.begin(), s.t_ns.begin() + static_cast<std::ptrdiff_t>(keep_from));
    s.value.erase(s.value.begin(), s.value.begin() + static_cast<std::ptrdiff_t>(keep_from));
  }
}

bool LiveSeries::measures_energy() {
  std::lock_guard lock(mu_);
  return HasEnergySeries(run_);
}

std::string LiveSeries::why_no_energy() {
  if (measures_energy()) return "";
  std::string why;
  for (const Stat& p : problems_) {
    if (!Is(p, stats::kNvmlUnavailable) && !Is(p, stats::kRaplUnavailable) && !Is(p, stats::kMeterUnavailable)) continue;
    if (!why.empty()) why += "; ";
    why += p.description;
  }
  return why.empty() ? "no energy sensor was asked for" : why;
}

}  // namespace magneton::energy
