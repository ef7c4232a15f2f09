// Named windows: nesting, errors, the fallback without sensors, and energy
// from a meter whose readings this test writes (so the truth is known).
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "energy/clock.h"
#include "energy/monitor.h"
#include "energy_test_util.h"

namespace magneton::energy {
namespace {

using testing::TempDir;

SamplerOptions NoSensors() {
  SamplerOptions o;
  o.nvml = o.rapl = o.procfs = false;
  return o;
}

TEST(Monitor, WindowsNestAndCloseInAnyOrder) {
  Monitor m(NoSensors());
  ASSERT_TRUE(m.BeginWindow("outer").ok());
  ASSERT_TRUE(m.BeginWindow("inner").ok());
  EXPECT_FALSE(m.BeginWindow("inner").ok()) << "a name is open once at a time";
  EXPECT_EQ(m.OpenWindows().size(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto outer = m.EndWindow("outer");
  auto inner = m.EndWindow("inner");
  ASSERT_TRUE(outer.ok() && inner.ok());
  EXPECT_GE(outer->time_s, 0.02);
  EXPECT_LT(outer->start_ns, inner->start_ns);
  EXPECT_LT(outer->end_ns, inner->end_ns);
  EXPECT_FALSE(m.EndWindow("inner").ok());
  EXPECT_FALSE(m.EndWindow("never").ok());
  ASSERT_EQ(m.Windows().size(), 2u);
  EXPECT_EQ(m.Windows()[0].name, "outer");
  EXPECT_EQ(m.Windows()[0].domain, "magneton");
}

TEST(Monitor, WithoutSensorsWindowsSayWhy) {
  Monitor m(NoSensors());
  ASSERT_TRUE(m.BeginWindow("w").ok());
  auto w = m.EndWindow("w");
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(w->available);
  EXPECT_FALSE(w->reason.empty());
  EXPECT_EQ(w->measured_j(), 0);
}

// A meter bridge writes a reading every 10 ms stamped with the trace clock:
// 100 W, then 300 W. The window's energy follows the readings' stamps.
TEST(Monitor, AWindowIntegratesAMetersPower) {
  TempDir dir;
  const std::string path = dir / "meter.csv";
  std::ofstream(path) << "";  // exists before the Monitor opens it
  SamplerOptions o = NoSensors();
  o.meter = path;
  Monitor m(o);
  std::ofstream meter(path, std::ios::app);
  auto write = [&](double watts) {
    meter << NowNs() << "," << watts << "\n";
    meter.flush();
  };
  write(100);
  ASSERT_TRUE(m.BeginWindow("w").ok());
  int64_t switched = 0;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (i == 20) switched = NowNs();
    write(i < 20 ? 100 : 300);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(120));  // let the sampler (50 ms polls) read them
  write(300);
  auto w = m.EndWindow("w");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->available) << w->reason;
  ASSERT_EQ(w->devices.size(), 1u);
  const DeviceWindowEnergy& d = w->devices[0];
  EXPECT_EQ(d.source, "meter");
  EXPECT_EQ(d.peak_w, 300);
  double expect = 100 * double(switched - w->start_ns) * 1e-9 + 300 * double(w->end_ns - switched) * 1e-9;
  EXPECT_NEAR(d.joules, expect, 0.05 * expect + 2.0);
  EXPECT_NEAR(w->measured_j(), d.joules, 1e-12);
}

// A finished window's readings stay readable after the next window begins:
// Snapshot() (Python's series()) and a recomputation over the window must see
// every reading. Beginning a window once dropped all but the last second, so
// a check reading the series afterwards integrated only a window's tail.
TEST(Monitor, ALongWindowKeepsAllItsReadingsAfterTheNextBegins) {
  TempDir dir;
  const std::string path = dir / "meter.csv";
  std::ofstream(path) << "";
  SamplerOptions o = NoSensors();
  o.meter = path;
  Monitor m(o);
  std::ofstream meter(path, std::ios::app);
  auto write = [&](double watts) {
    meter << NowNs() << "," << watts << "\n";
    meter.flush();
  };
  write(200);
  ASSERT_TRUE(m.BeginWindow("long").ok());
  int written = 1;
  for (int i = 0; i < 150; ++i, ++written) {  // 1.5 s, longer than the old 1 s kept
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    write(i % 2 ? 200 : 250);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  auto w = m.EndWindow("long");
  ASSERT_TRUE(w.ok() && w->available) << w->reason;
  ASSERT_TRUE(m.BeginWindow("next").ok());

  magneton::Run run = m.Snapshot();
  ASSERT_EQ(run.series.size(), 1u);
  const SensorSeries& s = run.series[0];
  EXPECT_EQ(static_cast<int>(s.t_ns.size()), written) << "readings were dropped";
  EXPECT_LE(s.t_ns.front(), w->start_ns);
  auto again = WindowEnergy(run, w->start_ns, w->end_ns);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_NEAR(again[0].joules, w->devices[0].joules, 1e-9) << "the kept series gives the window's energy";
}

// With a retention, readings older than it go when the next window begins,
// keeping the last one before the cut (it still holds there).
TEST(Monitor, RetentionBoundsTheReadingsKeptBetweenWindows) {
  TempDir dir;
  const std::string path = dir / "meter.csv";
  std::ofstream(path) << "";
  SamplerOptions o = NoSensors();
  o.meter = path;
  o.retain_s = 0.2;
  Monitor m(o);
  std::ofstream meter(path, std::ios::app);
  for (int i = 0; i < 60; ++i) {
    meter << NowNs() << "," << (i % 2 ? 100 : 150) << "\n";  // changes: each one is kept
    meter.flush();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  int64_t cut = NowNs() - 200'000'000;
  ASSERT_TRUE(m.BeginWindow("w").ok());
  magneton::Run run = m.Snapshot();
  ASSERT_EQ(run.series.size(), 1u);
  const SensorSeries& s = run.series[0];
  ASSERT_GE(s.t_ns.size(), 2u);
  EXPECT_LT(s.t_ns.size(), 60u);
  EXPECT_LE(s.t_ns[0], cut + 5'000'000);
  EXPECT_GT(s.t_ns[1], cut - 5'000'000);
}

}  // namespace
}  // namespace magneton::energy
