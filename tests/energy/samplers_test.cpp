// Samplers into a real run file: SampleBuffer routes each sampler's series to
// the run's ids, announces series found while sampling, and writes stats.
// Also the NVML pieces that run without a GPU, and procfs on this process.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/store.h"
#include "energy/clock.h"
#include "energy/live_series.h"
#include "energy/meter_sampler.h"
#include "energy/nvml_api.h"
#include "energy/nvml_sampler.h"
#include "energy/procfs_sampler.h"
#include "energy_test_util.h"

namespace magneton::energy {
namespace {

using testing::TempDir;
using testing::WaitUntil;
using testing::WriteFile;

TEST(SampleBuffer, WritesDevicesSeriesReadingsAndStatsIntoARunFile) {
  TempDir dir;
  WriteFile(dir / "meter.csv", "100,50\n200,60\n300,60,aux\nnot a line\n400,70\n");
  SamplerOptions o;
  o.meter = dir / "meter.csv";
  auto sampler = OpenMeterSampler(o);
  ASSERT_TRUE(sampler.ok()) << sampler.error().message;

  RunInfo info;
  info.command = "samplers_test";
  auto writer = RunWriter::Create(dir / "run.mgt", info);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  // The run already has a GPU (written by the CUDA tracer, say) and one series.
  std::vector<Device> devices = {Device{0, "gpu", "NVIDIA H200", "GPU-1", 0, 0}};
  ASSERT_TRUE((*writer)->Add(devices[0]).ok());
  ASSERT_TRUE((*writer)->AddSeries(SensorSeries{0, 0, "power.instant", "W", "nvml", {5}, {80}}).ok());

  SampleBuffer buffer(/*first_series_id=*/1);
  auto sink = buffer.Attach(**sampler, writer->get(), &devices);
  ASSERT_TRUE(sink.ok()) << sink.error().message;
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].id, 1);
  EXPECT_EQ(devices[1].kind, "meter");
  ASSERT_TRUE((*sampler)->Start(*sink).ok());
  ASSERT_TRUE(WaitUntil([&] {
    EXPECT_TRUE(buffer.Drain(writer->get()).ok());  // drained on this (the writer's) thread
    return buffer.samples_written() >= 4;
  }));
  (*sampler)->Stop();
  ASSERT_TRUE(buffer.Drain(writer->get()).ok());
  ASSERT_TRUE((*writer)->Close().ok());

  auto run = LoadRun(dir / "run.mgt");
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->devices.size(), 2u);
  ASSERT_EQ(run->series.size(), 3u);
  EXPECT_EQ(run->series[1].sensor, "power");
  EXPECT_EQ(run->series[1].device, 1);
  EXPECT_EQ(run->series[1].t_ns, (std::vector<int64_t>{100, 200, 400}));
  EXPECT_EQ(run->series[1].value, (std::vector<double>{50, 60, 70}));
  EXPECT_EQ(run->series[2].sensor, "power.aux");  // announced while sampling
  EXPECT_EQ(run->series[2].value, (std::vector<double>{60}));
  bool stat = false;
  for (const Stat& s : run->stats) stat = stat || (s.name == "meter_bad_lines" && s.value == 1);
  EXPECT_TRUE(stat);
}

TEST(Nvml, CudaVisibleDevicesMapsOrdinalsToNvmlIndices) {
  std::vector<std::string> uuids = {"GPU-aaa1", "GPU-bbb2", "GPU-ccc3"};
  EXPECT_EQ(VisibleNvmlIndices(nullptr, uuids), (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(VisibleNvmlIndices("2,0", uuids), (std::vector<unsigned>{2, 0}));
  EXPECT_EQ(VisibleNvmlIndices("GPU-bbb,1", uuids), (std::vector<unsigned>{1}));  // duplicate ends it
  EXPECT_EQ(VisibleNvmlIndices("1,7,2", uuids), (std::vector<unsigned>{1}));      // invalid ends it, like CUDA
  EXPECT_TRUE(VisibleNvmlIndices("", uuids).empty());
  EXPECT_TRUE(VisibleNvmlIndices("-1", uuids).empty());
  EXPECT_EQ(VisibleNvmlIndices(" 1 , 2 ", uuids), (std::vector<unsigned>{1, 2}));
}

TEST(Nvml, FieldValuesDecodeByTheirType) {
  nvml::FieldValue v{};
  v.value_type = 3;
  v.value.ull = 123456;
  EXPECT_EQ(nvml::FieldAsDouble(v), 123456.0);
  v.value_type = 0;
  v.value.d = 2.5;
  EXPECT_EQ(nvml::FieldAsDouble(v), 2.5);
  EXPECT_EQ(sizeof(nvml::FieldValue), 40u);  // nvmlFieldValue_t's size in nvml.h
  EXPECT_EQ(sizeof(nvml::PciInfo), 68u);     // nvmlPciInfo_t (v3)
}

// Where the driver is absent (CI), NVML's absence is a reason, not a crash.
TEST(Nvml, AbsentDriverIsReportedWithWhy) {
  auto api = nvml::Load();
  if (api.ok()) GTEST_SKIP() << "an NVIDIA driver is present here";
  EXPECT_NE(api.error().message.find("libnvidia-ml.so.1"), std::string::npos);
  std::vector<Stat> problems;
  auto samplers = OpenSamplers(SamplerOptions{}, &problems);
  bool noted = false;
  for (const Stat& p : problems) noted = noted || (p.name == "nvml_unavailable" && !p.description.empty());
  EXPECT_TRUE(noted);
}

TEST(Procfs, ParsesStatWithAwkwardCommandNames) {
  auto st = ParseProcStat("4242 (python3 (x) y) R 1 2 3 4 5 6 7 8 9 10 150 25 7 3 20 0 12 0 100 200");
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st->comm, "python3 (x) y");
  EXPECT_EQ(st->utime_ticks, 150);
  EXPECT_EQ(st->stime_ticks, 25);
  EXPECT_EQ(st->cutime_ticks, 7);
  EXPECT_EQ(st->cstime_ticks, 3);
  EXPECT_EQ(st->threads, 12);
  EXPECT_FALSE(ParseProcStat("4242 (x) R 1 2").ok());
  EXPECT_FALSE(ParseProcStat("no parens here").ok());
}

// This process burns CPU on a named thread: its CPU time, a thread series,
// and an estimate (its own sensor and source) appear.
TEST(Procfs, SeesThisProcessAndItsBusyThread) {
  SamplerOptions o;
  o.nvml = o.rapl = false;
  o.procfs_interval_us = 10000;
  o.cpu_watts_per_core = 10;
  LiveSeries live(o);
  std::atomic<bool> stop{false};
  std::thread burner([&] {
    pthread_setname_np(pthread_self(), "mg-burner");
    volatile double x = 0;
    while (!stop) x = x + std::sqrt(x + 1.0);
  });
  bool seen = WaitUntil([&] {
    magneton::Run run = live.Snapshot();
    for (const auto& s : run.series)
      if (s.sensor.find("mg-burner") != std::string::npos && !s.value.empty() && s.value.back() > 0.05) return true;
    return false;
  }, 10000);
  stop = true;
  burner.join();
  live.Stop();
  EXPECT_TRUE(seen);
  magneton::Run run = live.Snapshot();
  const SensorSeries* cpu = nullptr;
  const SensorSeries* estimate = nullptr;
  for (const auto& s : run.series) {
    if (s.sensor == "cpu.time") cpu = &s;
    if (s.sensor == "energy.estimate") estimate = &s;
  }
  ASSERT_TRUE(cpu && estimate);
  EXPECT_EQ(estimate->source, "estimate");
  ASSERT_FALSE(cpu->value.empty());
  EXPECT_NEAR(estimate->value.back(), 10 * cpu->value.back(), 1e-9);
  EXPECT_FALSE(live.measures_energy()) << "an estimate is not a measurement";
}

}  // namespace
}  // namespace magneton::energy
