// The Perfetto / Chrome JSON trace: valid JSON, slices that nest on every
// track, counters for the sensor series and the attributed energy.
#include "report/perfetto.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report_fixture.h"

namespace magneton::report {
namespace {

using nlohmann::json;

json Export(const Run& run, const energy::Attribution& e, TraceStats* stats = nullptr) {
  std::stringstream out;
  TraceStats s = WritePerfettoTrace(run, e, out);
  if (stats) *stats = s;
  return json::parse(out.str());
}

TEST(ReportPerfetto, SlicesCountersAndNames) {
  fixture::Pair p = fixture::Tf32Pair(3, 1.3, 1.2);
  fixture::AddPower(p.a.b.run, 250);
  magneton::Range r{0, "forward", "magneton", 77, p.a.b.run.info.start_ns, p.a.b.run.info.end_ns, kNone};
  p.a.b.run.ranges.push_back(r);
  TraceStats stats;
  json t = Export(p.a.b.run, p.a.Energy(), &stats);
  ASSERT_TRUE(t["traceEvents"].is_array());
  EXPECT_EQ(t["displayTimeUnit"], "ns");
  std::map<std::string, int> by_cat;
  int counters = 0, energy_points = 0;
  std::set<std::string> process_names;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "X") by_cat[e["cat"]]++;
    if (e["ph"] == "C") {
      ++counters;
      if (e["name"] == "energy attributed to kernels (J)") ++energy_points;
    }
    if (e["ph"] == "M" && e["name"] == "process_name") process_names.insert(e["args"]["name"]);
  }
  EXPECT_EQ(by_cat["op"], static_cast<int>(p.a.b.run.ops.size()));
  EXPECT_EQ(by_cat["kernel"], static_cast<int>(p.a.b.run.kernels.size()));
  EXPECT_EQ(by_cat["range"], 1);
  EXPECT_EQ(energy_points, static_cast<int>(p.a.b.run.kernels.size()));
  EXPECT_EQ(counters, stats.counters);
  EXPECT_EQ(counters, static_cast<int>(p.a.b.run.series[0].t_ns.size() * 2) + energy_points);
  EXPECT_TRUE(process_names.count("gpu 0: NVIDIA H200"));
  // Kernel slices carry their launch configuration and energy.
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "kernel") {
      EXPECT_EQ(e["args"]["grid"][0], 132);
      EXPECT_TRUE(e["args"]["energy_j"].is_number());
      EXPECT_EQ(e["args"]["op"], "aten::addmm");
      break;
    }
}

TEST(ReportPerfetto, OverlappingSlicesGetTheirOwnLanesSoEveryTrackNests) {
  fixture::RunBuilder b("x");
  b.run.info.start_ns = 1000;
  int64_t s = b.Stack({});
  b.Op("outer", kNone, 1000, 9000, s);
  b.Op("inner", 0, 2000, 3000, s);
  b.Op("crossing", kNone, 8000, 12000, s);  // starts inside outer, ends after it
  b.Op("later", kNone, 13000, 14000, s);
  json t = Export(b.run, {});
  // Per (pid, tid): every slice either nests in the open one or starts after it ends.
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X")
      tracks[{e["pid"], e["tid"]}].push_back({e["ts"], e["ts"].get<double>() + e["dur"].get<double>()});
  EXPECT_EQ(tracks.size(), 2u);
  for (auto& [key, slices] : tracks) {
    std::vector<double> open;
    for (auto [start, end] : slices) {
      while (!open.empty() && open.back() <= start) open.pop_back();
      EXPECT_TRUE(open.empty() || end <= open.back())
          << "slice [" << start << "," << end << ") crosses its parent";
      open.push_back(end);
    }
  }
  // Times are microseconds since the start of the run, with the nanoseconds kept.
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "inner") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1.0);
    }
}

}  // namespace
}  // namespace magneton::report
