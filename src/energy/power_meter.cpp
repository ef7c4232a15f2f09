#include "energy/power_meter.h"

#include <chrono>
#include <thread>

#include "energy/clock.h"
#include "energy/energy_curve.h"
#include "energy/live_series.h"

namespace magneton::energy {

MeterClock MeterClock::System() {
  return {NowNs, [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }};
}

std::unique_ptr<PowerMeter> PowerMeter::Open(const std::string& energy, std::vector<Stat>* problems) {
  if (energy == "none") return Without("energy='none'");
  SamplerOptions so;
  so.nvml = energy == "nvml" || energy == "auto";
  so.rapl = energy == "rapl" || energy == "auto";
  so.procfs = false;
  auto live = std::make_unique<LiveSeries>(so);
  std::string reason = live->measures_energy() ? "" : live->why_no_energy();
  for (const Stat& p : live->problems()) problems->push_back(p);
  return std::unique_ptr<PowerMeter>(new PowerMeter(std::move(live), std::move(reason)));
}

std::unique_ptr<PowerMeter> PowerMeter::Without(std::string reason) {
  return std::unique_ptr<PowerMeter>(new PowerMeter(nullptr, std::move(reason)));
}

PowerMeter::PowerMeter(std::unique_ptr<LiveSeries> live, std::string reason)
    : live_(std::move(live)), clock_(MeterClock::System()), reason_(std::move(reason)) {
  if (live_) {
    snapshot_ = [series = live_.get()] { return series->Snapshot(); };
    available_ = live_->measures_energy();
  }
  if (reason_.empty() && !available_) reason_ = "no energy sensor";
}

PowerMeter::PowerMeter(std::function<Run()> snapshot, MeterClock clock)
    : snapshot_(std::move(snapshot)), clock_(std::move(clock)) {
  available_ = HasEnergySeries(snapshot_());
  if (!available_) reason_ = "no energy sensor";
}

PowerMeter::~PowerMeter() {
  if (live_) live_->Stop();
}

WindowPower PowerMeter::Average(int32_t device, int64_t t0_ns, int64_t t1_ns) {
  if (!snapshot_) return {};
  WindowPower p = MeasureWindowPower(snapshot_(), device, t0_ns, t1_ns);
  if (p.period_s > 0) period_s_ = p.period_s;
  return p;
}

WindowPower PowerMeter::Idle(int32_t device, double seconds) {
  const int64_t t0 = clock_.now();
  clock_.sleep(seconds);
  return Average(device, t0, clock_.now());
}

void PowerMeter::ShiftPhase() {
  std::uniform_real_distribution<double> delay(0, period_s_);
  clock_.sleep(delay(phase_));
}

}  // namespace magneton::energy
