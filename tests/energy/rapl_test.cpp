// RAPL: the powercap scan and the perf PMU scan against fixture sysfs trees,
// and the live sampler unwrapping a counter that wraps while it is polled.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "energy/live_series.h"
#include "energy/rapl_sampler.h"
#include "energy_test_util.h"

namespace magneton::energy {
namespace {

using testing::TempDir;
using testing::TestData;
using testing::WaitUntil;
using testing::WriteFile;

TEST(WrappingCounter, AddsTheRangeWhenTheRawValueStepsBack) {
  WrappingCounter c(1000);
  EXPECT_EQ(c.Update(900), 0);
  EXPECT_EQ(c.Update(950), 50);
  EXPECT_EQ(c.Update(20), 120);  // 950 -> 1000 wraps to 0 -> 20
  EXPECT_EQ(c.Update(20), 120);
  EXPECT_EQ(c.wraps(), 1);
}

TEST(WrappingCounter, WithoutARangeNeverGoesBackward) {
  WrappingCounter c(0);
  c.Update(100);
  EXPECT_EQ(c.Update(50), 0);
  EXPECT_EQ(c.Update(70), 20);
}

TEST(Powercap, ScansZonesIntoDevicesAndSensors) {
  auto zones = ScanPowercap(TestData("rapl/powercap"));
  ASSERT_TRUE(zones.ok()) << zones.error().message;
  ASSERT_EQ(zones->size(), 4u);  // the mmio duplicate and the control type are not zones
  EXPECT_EQ((*zones)[0].name, "package-0");
  EXPECT_EQ((*zones)[0].sensor, "energy.total");
  EXPECT_EQ((*zones)[0].package, 0);
  EXPECT_DOUBLE_EQ((*zones)[0].max_range_uj, 262143328850.0);
  EXPECT_EQ((*zones)[1].name, "dram");
  EXPECT_EQ((*zones)[1].sensor, "energy.dram");
  EXPECT_EQ((*zones)[3].package, 1);
  EXPECT_TRUE((*zones)[2].problem.empty());
  EXPECT_NE((*zones)[3].problem.find("energy_uj"), std::string::npos) << (*zones)[3].problem;
}

TEST(Powercap, AbsentRootSaysSo) {
  auto zones = ScanPowercap("/nonexistent/powercap");
  ASSERT_FALSE(zones.ok());
  EXPECT_NE(zones.error().message.find("does not exist"), std::string::npos);
}

TEST(PerfPower, ParsesEventsScaleAndCpumask) {
  auto pmu = ScanPerfPower(TestData("rapl/perf_power"));
  ASSERT_TRUE(pmu.ok()) << pmu.error().message;
  EXPECT_EQ(pmu->type, 987654);
  EXPECT_EQ(pmu->cpus, (std::vector<int>{0, 28}));
  ASSERT_EQ(pmu->events.size(), 3u);
  EXPECT_EQ(pmu->events[1].name, "energy-pkg");
  EXPECT_EQ(pmu->events[1].config, 0x02u);
  EXPECT_EQ(pmu->events[1].sensor, "energy.total");
  EXPECT_DOUBLE_EQ(pmu->events[1].scale, 2.3283064365386962890625e-10);
}

TEST(PerfPower, AnUnopenableEventBecomesAReasonNotACrash) {
  auto probe = ProbePerfPower(TestData("rapl/perf_power"));
  ASSERT_FALSE(probe.ok());
  EXPECT_NE(probe.error().message.find("perf_event_open"), std::string::npos) << probe.error().message;
  SamplerOptions o;
  o.powercap_root = "/nonexistent";
  o.perf_power_root = TestData("rapl/perf_power");
  std::vector<Stat> problems;
  auto sampler = OpenRaplSampler(o, &problems);
  EXPECT_FALSE(sampler.ok());
  EXPECT_FALSE(problems.empty());
}

// perf event fds are not seekable: a positioned read fails with ESPIPE (seen
// on an H200 host on every read). A pipe has the same property.
TEST(PerfPower, ReadsACountFromAnUnseekableFd) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const uint64_t value = 123456789012345ull;
  ASSERT_EQ(write(fds[1], &value, sizeof value), static_cast<ssize_t>(sizeof value));
  ASSERT_EQ(write(fds[1], "abc", 3), 3);
  auto count = ReadPerfCount(fds[0]);
  ASSERT_TRUE(count.ok()) << count.error().message;
  EXPECT_EQ(*count, value);
  close(fds[1]);
  auto short_read = ReadPerfCount(fds[0]);  // 3 bytes left, then end of file
  ASSERT_FALSE(short_read.ok());
  EXPECT_NE(short_read.error().message.find("short read"), std::string::npos) << short_read.error().message;
  close(fds[0]);
}

// The sampler reads a copy of the fixture while the test rewrites energy_uj:
// package-0 goes up, wraps past max_energy_range_uj, and goes up again.
TEST(RaplSampler, UnwrapsACounterThatWrapsWhileSampled) {
  TempDir dir;
  std::filesystem::copy(TestData("rapl/powercap"), dir.path(), std::filesystem::copy_options::recursive);
  const std::string pkg = dir / "intel-rapl:0/energy_uj";
  const double range = 262143328850.0;
  WriteFile(pkg, "262143000000\n");
  SamplerOptions o;
  o.nvml = false;
  o.procfs = false;
  o.powercap_root = dir.path();
  o.rapl_poll_interval_us = 1000;
  LiveSeries live(o);
  ASSERT_TRUE(live.measures_energy()) << live.why_no_energy();

  auto last_value = [&]() -> double {
    magneton::Run run = live.Snapshot();
    for (const auto& s : run.series)
      if (s.sensor == "energy.total" && run.devices[s.device].ordinal == 0 && !s.value.empty()) return s.value.back();
    return -1;
  };
  ASSERT_TRUE(WaitUntil([&] { return last_value() > 0; }));
  double origin = last_value();
  EXPECT_NEAR(origin, 262143.0, 1e-6);  // joules: the raw counter is the origin

  WriteFile(pkg, "262143300000\n");  // +300000 uJ
  ASSERT_TRUE(WaitUntil([&] { return last_value() > origin + 0.2; }));
  WriteFile(pkg, "500000\n");  // wrapped: +28850 to the range, then +500000
  double expect = origin + (300000.0 + (range - 262143300000.0) + 500000.0) * 1e-6;
  ASSERT_TRUE(WaitUntil([&] { return std::abs(last_value() - expect) < 1e-6; }))
      << "last " << last_value() << " expected " << expect;
  WriteFile(pkg, "1500000\n");
  expect += 1.0;
  ASSERT_TRUE(WaitUntil([&] { return std::abs(last_value() - expect) < 1e-6; }));
  live.Stop();

  magneton::Run run = live.Snapshot();
  bool counted = false;
  for (const Stat& s : run.stats)
    if (s.name == "rapl_counter_wraps") counted = s.value == 1;
  EXPECT_TRUE(counted) << "a wrap is counted as a stat";
  // Package 1 is its own device; its unreadable dram zone is a problem, not a series.
  int cpu_devices = 0;
  for (const Device& d : run.devices) cpu_devices += d.kind == "cpu";
  EXPECT_EQ(cpu_devices, 2);
  bool noted = false;
  for (const Stat& p : live.problems()) noted = noted || p.name == "rapl_zone_unreadable";
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace magneton::energy
