// The external meter: line parsing (bad lines are counted, never fatal), a
// recorded file, and a named pipe written while the sampler reads it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <thread>

#include "energy/live_series.h"
#include "energy/meter_sampler.h"
#include "energy_test_util.h"

namespace magneton::energy {
namespace {

using testing::TempDir;
using testing::WaitUntil;
using testing::WriteFile;

MeterLine Parse(const std::string& line, MeterReading* r, std::string* why, bool header = false) {
  return ParseMeterLine(line, header, r, why);
}

TEST(MeterLine, ParsesReadingsWithAndWithoutChannel) {
  MeterReading r;
  std::string why;
  ASSERT_EQ(Parse("1000,250.5", &r, &why), MeterLine::kReading);
  EXPECT_EQ(r.t_ns, 1000);
  EXPECT_DOUBLE_EQ(r.watts, 250.5);
  EXPECT_EQ(r.channel, "");
  ASSERT_EQ(Parse(" 2000 , 12 , psu-1 \r", &r, &why), MeterLine::kReading);
  EXPECT_EQ(r.channel, "psu-1");
}

TEST(MeterLine, SkipsCommentsBlanksAndOneHeader) {
  MeterReading r;
  std::string why;
  EXPECT_EQ(Parse("", &r, &why), MeterLine::kSkip);
  EXPECT_EQ(Parse("# meter: Yokogawa WT310", &r, &why), MeterLine::kSkip);
  EXPECT_EQ(Parse("t_ns,watts,channel", &r, &why, true), MeterLine::kSkip);
  EXPECT_EQ(Parse("t_ns,watts,channel", &r, &why, false), MeterLine::kBad) << "a header only at the top";
}

TEST(MeterLine, RejectsWhatIsNotAReading) {
  MeterReading r;
  std::string why;
  for (const char* bad : {"12.5,100", "100", "100,abc", "100,-3", "100,nan", "100,1,a b", "1,2,3,4", "-5,10",
                          "100,1e999"}) {
    EXPECT_EQ(Parse(bad, &r, &why), MeterLine::kBad) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

SamplerOptions MeterOnly(const std::string& path) {
  SamplerOptions o;
  o.nvml = o.rapl = o.procfs = false;
  o.meter = path;
  return o;
}

const SensorSeries* Find(const Run& run, const std::string& sensor) {
  for (const auto& s : run.series)
    if (s.sensor == sensor) return &s;
  return nullptr;
}

TEST(MeterSampler, ReadsAFileCountsBadLinesAndSplitsChannels) {
  TempDir dir;
  WriteFile(dir / "meter.csv",
            "t_ns,watts,channel\n"
            "1000000000,100\n"
            "1100000000,100\n"          // unchanged: not stored again
            "1200000000,150\n"
            "garbage\n"
            "1300000000,40,gpu\n"
            "1150000000,120\n"          // older than its channel's last: out of order
            "1400000000,45,gpu\n"
            "1500000000,-1\n"
            "1600000000,90");           // last line without newline
  LiveSeries live(MeterOnly(dir / "meter.csv"));
  // The last line has no newline yet: it is read when the sampler stops.
  ASSERT_TRUE(WaitUntil([&] {
    magneton::Run snap = live.Snapshot();  // Find points into it: keep it alive
    const SensorSeries* s = Find(snap, "power.gpu");
    return s && s->value.size() == 2;
  }));
  live.Stop();
  magneton::Run run = live.Snapshot();
  const SensorSeries* main = Find(run, "power");
  const SensorSeries* gpu = Find(run, "power.gpu");
  ASSERT_TRUE(main && gpu);
  EXPECT_EQ(main->t_ns, (std::vector<int64_t>{1000000000, 1200000000, 1600000000}));
  EXPECT_EQ(main->value, (std::vector<double>{100, 150, 90}));
  EXPECT_EQ(gpu->value, (std::vector<double>{40, 45}));
  EXPECT_EQ(main->source, "meter");
  int64_t bad = 0, order = 0;
  for (const Stat& s : run.stats) {
    if (s.name == "meter_bad_lines") {
      bad = s.value;
      EXPECT_NE(s.description.find("line 5"), std::string::npos) << s.description;
    }
    if (s.name == "meter_out_of_order") order = s.value;
  }
  EXPECT_EQ(bad, 2);
  EXPECT_EQ(order, 1);
}

TEST(MeterSampler, FollowsANamedPipeAsItsWriterWrites) {
  TempDir dir;
  std::string fifo = dir / "meter.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  LiveSeries live(MeterOnly(fifo));  // opens before any writer exists
  std::thread writer([&] {
    int fd = open(fifo.c_str(), O_WRONLY);
    for (int i = 0; i < 5; ++i) {
      std::string line = std::to_string(1000 + i) + "," + std::to_string(10 * (i + 1)) + "\n";
      ASSERT_EQ(write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    close(fd);
  });
  writer.join();
  ASSERT_TRUE(WaitUntil([&] {
    magneton::Run snap = live.Snapshot();
    const SensorSeries* s = Find(snap, "power");
    return s && s->value.size() == 5;
  }));
  magneton::Run run = live.Snapshot();
  EXPECT_EQ(Find(run, "power")->value, (std::vector<double>{10, 20, 30, 40, 50}));
}

TEST(MeterSampler, AMissingSourceIsAProblemNotACrash) {
  LiveSeries live(MeterOnly("/nonexistent/meter.csv"));
  EXPECT_FALSE(live.measures_energy());
  EXPECT_NE(live.why_no_energy().find("/nonexistent/meter.csv"), std::string::npos) << live.why_no_energy();
}

}  // namespace
}  // namespace magneton::energy
