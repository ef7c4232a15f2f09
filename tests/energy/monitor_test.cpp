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

}  // namespace
}  // namespace magneton::energy
