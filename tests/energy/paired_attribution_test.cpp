// Two runs compared are attributed alike (energy/paired_attribution.h): on
// the H200 measured passes of the torch-vs-jax case (tests/data/energy/,
// make_paired.sh), the PyTorch side alone falls back to the power-shaped
// curve while the JAX side fits the activity model; together both get one.
#include <gtest/gtest.h>

#include <cmath>

#include "energy/paired_attribution.h"
#include "recorded_runs.h"

namespace magneton::energy {
namespace {

const DeviceEnergy& Gpu(const Attribution& e) {
  for (const auto& d : e.devices)
    if (d.method != "unavailable") return d;
  static const DeviceEnergy none;
  ADD_FAILURE() << "no device with energy";
  return none;
}

TEST(PairedAttribution, RecordedRunsOnDifferentMethodsGetOneActivityModel) {
  const std::string data = std::string(MAGNETON_TEST_DATA) + "/energy/";
  LOAD_RECORDED_RUN(data + "torch_vs_jax_torch-measured.mgt", a);
  LOAD_RECORDED_RUN(data + "torch_vs_jax_jax-measured.mgt", b);
  const DeviceEnergy alone_a = Gpu(Attribute(*a)), alone_b = Gpu(Attribute(*b));
  ASSERT_EQ(alone_a.method, "energy.total+power.instant");
  ASSERT_EQ(alone_b.method, "energy.total+activity");

  PairedAttribution p = AttributeAlike(*a, *b);
  const DeviceEnergy &ga = Gpu(p.a), &gb = Gpu(p.b);
  EXPECT_EQ(ga.method, "energy.total+activity");
  EXPECT_EQ(gb.method, "energy.total+activity");
  ASSERT_TRUE(ga.activity && gb.activity);
  EXPECT_EQ(ga.activity->busy_w, gb.activity->busy_w);
  EXPECT_EQ(ga.activity->idle_w, gb.activity->idle_w);
  EXPECT_GT(ga.activity->busy_w, ga.activity->idle_w);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("run a's counter intervals could not fit the activity model alone"), std::string::npos)
      << p.notes[0];
  // The counter still decides each interval's joules: the split changes, the totals do not.
  EXPECT_NEAR(ga.busy_j + ga.idle_j, ga.total_j, 1e-9 * ga.total_j);
  EXPECT_NEAR(ga.total_j, alone_a.total_j, 0.01 * alone_a.total_j);
  EXPECT_NEAR(gb.total_j, alone_b.total_j, 0.01 * alone_b.total_j);
}

TEST(PairedAttribution, RunsOnTheSameMethodAreAttributedAsAlone) {
  // The UNet's measured passes with TF32 off and on (H200): both power-shaped alone.
  LOAD_RECORDED_RUN(testing::GpuRuns() + "unet_fp32-measured.mgt", a);
  LOAD_RECORDED_RUN(testing::GpuRuns() + "unet_tf32-measured.mgt", b);
  PairedAttribution p = AttributeAlike(*a, *b);
  EXPECT_TRUE(p.notes.empty());
  EXPECT_EQ(Gpu(p.a).method, Gpu(Attribute(*a)).method);
  EXPECT_EQ(p.a.kernel_j, Attribute(*a).kernel_j);
  EXPECT_EQ(p.b.kernel_j, Attribute(*b).kernel_j);
}

// A run on one GPU: `intervals` counter readings 100 ms apart, and in each
// interval one kernel busy for the given fraction of it, drawing `idle_w` +
// `extra_w` x that fraction.
magneton::Run CounterRun(const std::vector<double>& busy, double idle_w, double extra_w) {
  magneton::Run run;
  run.devices.push_back({0, "gpu", "NVIDIA H200", "GPU-0", 0, 0});
  SensorSeries e;
  e.sensor = "energy.total";
  e.unit = "J";
  e.source = "nvml";
  const int64_t period = 100'000'000;
  double joules = 0;
  for (size_t i = 0; i <= busy.size(); ++i) {
    e.t_ns.push_back(static_cast<int64_t>(i) * period);
    e.value.push_back(joules);
    if (i == busy.size()) break;
    joules += (idle_w + extra_w * busy[i]) * 0.1;
    Kernel k;
    k.id = static_cast<int64_t>(run.kernels.size());
    k.name = "gemm";
    k.start_ns = static_cast<int64_t>(i) * period;
    k.end_ns = k.start_ns + static_cast<int64_t>(busy[i] * period);
    run.kernels.push_back(k);
  }
  run.series.push_back(e);
  run.info.start_ns = 0;
  run.info.end_ns = static_cast<int64_t>(busy.size()) * period;
  return run;
}

TEST(PairedAttribution, NoModelForBothKeepsBothOnThePowerShapedCurve) {
  // a's busy fraction varies and fits; b's is constant, at a power no line
  // through a's intervals passes: together the slope comes out negative.
  magneton::Run a = CounterRun({0.2, 0.8, 0.2, 0.8, 0.2, 0.8, 0.2, 0.8}, 100, 100);
  magneton::Run b = CounterRun(std::vector<double>(40, 0.9), 60, 0);
  ASSERT_TRUE(Gpu(Attribute(a)).activity);
  ASSERT_FALSE(Gpu(Attribute(b)).activity);
  PairedAttribution p = AttributeAlike(a, b);
  EXPECT_EQ(Gpu(p.a).method, "energy.total");
  EXPECT_EQ(Gpu(p.b).method, "energy.total");
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("not even together with the other run's"), std::string::npos) << p.notes[0];
}

}  // namespace
}  // namespace magneton::energy
