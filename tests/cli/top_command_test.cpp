// `magneton top` on runs built from CUPTI records: order, grouping, JSON,
// and what it says when the run has no energy.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../capture/records.h"
#include "run_magneton.h"

namespace magneton::testing {
namespace {

// Two kernel names: "short" runs often but briefly, "long" once for longer.
std::vector<RawRecord> Kernels() {
  std::vector<RawRecord> r;
  for (uint32_t i = 0; i < 4; ++i)
    r.push_back(KernelRecord("short", 0, 10 + i, 1'000'000 + i * 100'000, 1'000'000 + i * 100'000 + 10'000));
  r.push_back(KernelRecord("long", 0, 20, 2'000'000, 2'100'000));
  return r;
}

nlohmann::json TopJson(const std::string& run, std::vector<std::string> args = {}) {
  args.insert(args.begin(), {"top", run, "--json"});
  auto r = RunMagneton(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

TEST(TopCommand, WithoutEnergyKernelsAreOrderedByGpuTime) {
  TempDir dir;
  auto p = Process(dir, Kernels(), {}, [](RunWriter&) {}, 3'000'000);
  auto j = TopJson(p.path);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["energy_available"], false);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["name"], "long");
  EXPECT_EQ(j["rows"][0]["gpu_ns"], 100'000);
  EXPECT_EQ(j["rows"][1]["name"], "short");
  EXPECT_EQ(j["rows"][1]["calls"], 4);
  EXPECT_EQ(j["rows"][1]["gpu_ns"], 40'000);
  EXPECT_TRUE(j["rows"][0]["joules"].is_null());
  EXPECT_NEAR(j["rows"][0]["gpu_pct"].get<double>(), 100.0 * 100 / 140, 1e-9);
  auto text = RunMagneton({"top", p.path});
  EXPECT_NE(text.out.find("energy unavailable"), std::string::npos) << text.out;
}

TEST(TopCommand, WithAnEnergyCounterKernelsAreOrderedByEnergy) {
  TempDir dir;
  std::vector<Device> devices = {{0, "gpu", "NVIDIA H200", "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f", 0, 0}};
  capture::ProcessorOptions o;
  o.devices = &devices;
  auto p = Process(dir, Kernels(), o, [&](RunWriter& w) {
    ASSERT_TRUE(w.Add(devices[0]).ok());
    SensorSeries s;
    s.id = 0;
    s.device = 0;
    s.sensor = "energy.total";
    s.unit = "J";
    s.source = "nvml";
    ASSERT_TRUE(w.AddSeries(s).ok());
    // A steady 100 W counter read every 10 us across the run.
    for (int64_t t = 0; t <= 3'000'000; t += 10'000) ASSERT_TRUE(w.AddSample(0, t, 100.0 * t * 1e-9).ok());
  }, 3'000'000);
  auto j = TopJson(p.path);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["energy_available"], true) << j.dump();
  ASSERT_EQ(j["rows"].size(), 2u);
  // At a steady power, energy follows busy time: long (100 us) before short (40 us).
  EXPECT_EQ(j["rows"][0]["name"], "long");
  double long_j = j["rows"][0]["joules"].get<double>(), short_j = j["rows"][1]["joules"].get<double>();
  EXPECT_GT(long_j, short_j);
  EXPECT_GT(short_j, 0);
  EXPECT_GT(j["rows"][0]["avg_w"].get<double>(), 0);
}

TEST(TopCommand, RangesGetTheKernelsLaunchedInsideThem) {
  TempDir dir;
  const uint32_t S = CUPTI_ACTIVITY_FLAG_MARKER_START, E = CUPTI_ACTIVITY_FLAG_MARKER_END;
  std::vector<RawRecord> r = {MarkerRecord(S, 1, "magneton:step", 5, 900'000),
                              ApiRecord(true, 211, 5, 20, 1'950'000, 1'960'000),
                              KernelRecord("long", 0, 20, 2'000'000, 2'100'000),
                              MarkerRecord(E, 1, nullptr, 5, 1'990'000),
                              ApiRecord(true, 211, 5, 21, 2'500'000, 2'510'000),  // after the range
                              KernelRecord("later", 0, 21, 2'600'000, 2'650'000)};
  auto p = Process(dir, r, {}, [](RunWriter&) {}, 3'000'000);
  auto j = TopJson(p.path, {"--by", "range"});
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["by"], "range");
  EXPECT_EQ(j["rows"][0]["name"], "magneton:step");
  EXPECT_EQ(j["rows"][0]["gpu_ns"], 100'000);  // launched inside, ran after it closed
  EXPECT_EQ(j["rows"][0]["wall_ns"], 1'090'000);
}

TEST(TopCommand, LimitsRowsAndRejectsBadInput) {
  TempDir dir;
  auto p = Process(dir, Kernels());
  auto j = TopJson(p.path, {"-n", "1"});
  EXPECT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["groups"], 2);
  auto bad = RunMagneton({"top", p.path, "--by", "thread"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--by thread"), std::string::npos);
  auto missing = RunMagneton({"top", dir / "none.mgt"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.mgt"), std::string::npos);
}

TEST(TopCommand, OperatorsOfARunWithoutKernelsAreByWallTimeAndARecordingPassSaysSo) {
  // Committed CPU recordings (tests/data/diff/): a recording pass and its measured pass.
  const std::string data = std::string(MAGNETON_TEST_DATA) + "/diff/";
  auto recording = RunMagneton({"top", data + "gelu_new.mgt", "--by", "op"});
  ASSERT_EQ(recording.exit_code, 0) << recording.err;
  EXPECT_NE(recording.out.find("Operators by wall time"), std::string::npos) << recording.out;
  EXPECT_NE(recording.out.find("include the fingerprinting"), std::string::npos) << recording.out;
  auto measured = RunMagneton({"top", data + "gelu_new-measured.mgt", "--by", "op"});
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  EXPECT_NE(measured.out.find("Operators by wall time"), std::string::npos) << measured.out;
  EXPECT_EQ(measured.out.find("fingerprinting"), std::string::npos) << measured.out;
  EXPECT_EQ(measured.out.find("GPU time"), std::string::npos) << measured.out;
}

}  // namespace
}  // namespace magneton::testing
