// Energy curves on real NVML readings recorded on the H200 (2026-12-02,
// scripts/gpu/energy.sh; tests/data/energy/h200_steady.json): the last second
// of a steady bf16 matmul loop, a 30/70 ms duty cycle, then idle.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "energy/energy_curve.h"

namespace magneton::energy {
namespace {

struct Recorded {
  magneton::Run run;
  int64_t steady_end = 0, duty_start = 0, duty_end = 0;
};

Recorded Load(bool with_counter = true) {
  std::ifstream in(std::string(MAGNETON_TEST_DATA) + "/energy/h200_steady.json");
  nlohmann::json j = nlohmann::json::parse(in);
  Recorded r;
  r.run.devices.push_back(Device{0, "gpu", "NVIDIA H200", "", 0, 0});
  for (const auto& s : j["series"]) {
    if (!with_counter && s["sensor"] == "energy.total") continue;
    SensorSeries out;
    out.id = static_cast<int64_t>(r.run.series.size());
    out.sensor = s["sensor"];
    out.unit = s["unit"];
    out.source = s["source"];
    out.t_ns = s["t_ns"].get<std::vector<int64_t>>();
    out.value = s["value"].get<std::vector<double>>();
    r.run.series.push_back(std::move(out));
  }
  r.steady_end = j["windows"]["steady"]["end_ns"];
  r.duty_start = j["windows"]["duty"]["start_ns"];
  r.duty_end = j["windows"]["duty"]["end_ns"];
  return r;
}

// Between any two counter updates the curve holds exactly the counter's delta.
TEST(H200Series, CurveReconcilesWithTheCounterAtEveryUpdate) {
  Recorded r = Load();
  const SensorSeries* c = r.run.FindSeries(0, "energy.total");
  ASSERT_NE(c, nullptr);
  ASSERT_GE(c->t_ns.size(), 40u);
  EnergyCurve curve = BuildEnergyCurve(r.run, 0, c->t_ns[1], c->t_ns.back());
  EXPECT_EQ(curve.method, "energy.total+power.instant");
  for (size_t i = 2; i < c->t_ns.size(); i += 7)
    EXPECT_NEAR(curve.Between(c->t_ns[1], c->t_ns[i]), c->value[i] - c->value[1], 1e-6) << i;
}

// Under steady load, instant power integrated (lag-corrected) agrees with the
// counter: over the steady tail's 0.9 s of counter updates, within 3%.
TEST(H200Series, SteadyInstantPowerIntegralMatchesTheCounter) {
  Recorded r = Load();
  const SensorSeries* c = r.run.FindSeries(0, "energy.total");
  size_t a = 1, b = a;
  while (b + 1 < c->t_ns.size() && c->t_ns[b + 1] <= r.steady_end) ++b;
  ASSERT_GE(b - a, 8u);
  double counter = c->value[b] - c->value[a];
  double seconds = double(c->t_ns[b] - c->t_ns[a]) * 1e-9;
  EXPECT_NEAR(counter / seconds, 690.1, 0.03 * 690.1) << "the Monitor's steady figure";
  Recorded power_only = Load(false);
  EnergyCurve p = BuildEnergyCurve(power_only.run, 0, c->t_ns[a], c->t_ns[b]);
  EXPECT_EQ(p.method, "power.instant integral");
  EXPECT_NEAR(p.Between(c->t_ns[a], c->t_ns[b]), counter, 0.03 * counter);
}

// After the duty cycle the GPU idles near the 118 W measured over 3 s.
TEST(H200Series, IdleLevelAfterTheDutyCycle) {
  Recorded r = Load();
  const SensorSeries* c = r.run.FindSeries(0, "energy.total");
  size_t n = c->t_ns.size();
  ASSERT_GT(c->t_ns[n - 3], r.duty_end + 100'000'000);
  EnergyCurve curve = BuildEnergyCurve(r.run, 0, c->t_ns[n - 3], c->t_ns[n - 1]);
  double watts = curve.Between(c->t_ns[n - 3], c->t_ns[n - 1]) / (double(c->t_ns[n - 1] - c->t_ns[n - 3]) * 1e-9);
  EXPECT_NEAR(watts, 118.2, 0.1 * 118.2);
}

// The duty cycle: the counter integrates continuously, while instant power
// (a 25 ms average every ~100 ms) misses much of 30 ms bursts. Window energy
// follows the counter, not the sparse samples.
TEST(H200Series, DutyCycleEnergyFollowsTheCounter) {
  Recorded r = Load();
  Recorded power_only = Load(false);
  double with_counter = BuildEnergyCurve(r.run, 0, r.duty_start, r.duty_end).Between(r.duty_start, r.duty_end);
  double instant =
      BuildEnergyCurve(power_only.run, 0, r.duty_start, r.duty_end).Between(r.duty_start, r.duty_end);
  double seconds = double(r.duty_end - r.duty_start) * 1e-9;
  EXPECT_NEAR(with_counter / seconds, 354.8, 0.03 * 354.8) << "the check's counter mean";
  EXPECT_GT(with_counter, 1.3 * instant);
}

}  // namespace
}  // namespace magneton::energy
