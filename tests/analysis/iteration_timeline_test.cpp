// One iteration of each side on its timeline (iteration_timeline.h), from
// recorded runs: the H200 pair of cases/hf-38977 (device timeline, energy),
// the CPU GELU fixtures (host timeline), and a diff without measured passes.
#include "analysis/diff/iteration_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <set>

#include "analysis/diff/diff.h"
#include "core/store.h"
#include "recorded_runs.h"

namespace magneton::analysis {
namespace {

namespace fs = std::filesystem;

struct Pair {
  Run a, b, ma, mb;
};

Result<DiffReport> DiffPair(const Pair& p, bool measured) {
  return DiffRuns(p.a, p.b, measured ? &p.ma : nullptr, measured ? &p.mb : nullptr, DiffOptions{});
}

Pair LoadPair(const std::string& dir, const std::string& a, const std::string& b) {
  Pair p;
  for (auto [stem, run] : {std::pair{a, &p.a}, std::pair{a + "-measured", &p.ma}, std::pair{b, &p.b},
                           std::pair{b + "-measured", &p.mb}}) {
    auto r = LoadRun(dir + stem + ".mgt");
    EXPECT_TRUE(r.ok()) << dir << stem << ": " << (r.ok() ? "" : r.error().message);
    if (r.ok()) *run = std::move(*r);
  }
  return p;
}

// What holds for any timeline: items inside the iteration, by start, each
// naming its region's finding; busy and idle add up to the iteration.
void ExpectConsistent(const IterationTimeline& t, const DiffReport& r) {
  ASSERT_TRUE(t.available);
  ASSERT_FALSE(t.items.empty());
  EXPECT_GT(t.length_ns, 0);
  for (size_t i = 0; i < t.items.size(); ++i) {
    const TimelineItem& it = t.items[i];
    EXPECT_GE(it.start_ns, 0);
    EXPECT_LE(it.start_ns, it.end_ns);
    EXPECT_LT(it.start_ns, t.length_ns);
    if (i > 0) {
      EXPECT_LE(t.items[i - 1].start_ns, it.start_ns);
    }
    ASSERT_GE(it.lane, 0);
    ASSERT_LT(it.lane, static_cast<int32_t>(t.lanes.size()));
    if (it.region >= 0) {
      ASSERT_LT(it.region, static_cast<int64_t>(r.regions.size()));
      EXPECT_EQ(it.finding, r.regions[it.region].finding);
    } else {
      EXPECT_EQ(it.finding, -1);
    }
  }
  int64_t idle = 0;
  for (auto [from, to] : t.idle) {
    EXPECT_LT(from, to);
    idle += to - from;
  }
  EXPECT_EQ(t.busy_ns + idle, t.length_ns);
  for (const auto& s : t.syncs) {
    EXPECT_GE(s.start_ns, 0);
    EXPECT_LE(s.end_ns, t.length_ns);
  }
}

// Items of the finding at `index` on a timeline.
size_t ItemsOf(const IterationTimeline& t, int index) {
  return std::count_if(t.items.begin(), t.items.end(), [&](const TimelineItem& it) { return it.finding == index; });
}

// cases/hf-38977 on the H200: the wasteful side's LM head multiplies every
// position's hidden state, the efficient side's only the last ones.
TEST(IterationTimeline, GpuPairShowsTheWastedGemmOnTheDeviceTimelineWithPower) {
  const std::string packed = testing::CaseRuns("hf-38977") + "runs.tar.xz";
  if (!fs::exists(packed)) GTEST_SKIP() << packed << " is not in the tree";
  fs::path dir = fs::temp_directory_path() / "magneton_timeline_hf38977";
  fs::create_directories(dir);
  ASSERT_EQ(std::system(("tar xJf '" + packed + "' -C '" + dir.string() + "'").c_str()), 0);
  Pair p = LoadPair(dir.string() + "/", "wasteful", "efficient");
  auto r = DiffPair(p, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->energy_measured);
  ASSERT_GT(r->waste_count(), 0);
  for (const auto* t : {&r->timelines.a, &r->timelines.b}) {
    ExpectConsistent(*t, *r);
    EXPECT_TRUE(t->on_device);
    EXPECT_NE(t->what.find("of the measured pass"), std::string::npos) << t->what;
    EXPECT_FALSE(std::isnan(t->joules));
    ASSERT_FALSE(t->power_w.empty());
    EXPECT_EQ(t->power_t_ns.size(), t->power_w.size() + 1);
    EXPECT_EQ(t->power_t_ns.back(), t->length_ns);
    for (double w : t->power_w) EXPECT_GT(w, 50) << "an H200 draws more than 50 W while it works";
    // Its energy over the iteration, read from the power steps, is the iteration's.
    double j = 0;
    for (size_t i = 0; i < t->power_w.size(); ++i)
      j += t->power_w[i] * (t->power_t_ns[i + 1] - t->power_t_ns[i]) * 1e-9;
    EXPECT_NEAR(j, t->joules, 0.02 * t->joules);
    EXPECT_GT(ItemsOf(*t, 0), 0u) << "the top finding's region has kernels on both sides";
  }
  // The top finding is the wasteful side's: its GEMM takes a good part of that side's iteration.
  const Finding& top = r->findings[0];
  ASSERT_EQ(top.costly, 'a');
  int64_t top_ns = 0;
  for (const auto& it : r->timelines.a.items)
    if (it.finding == 0) top_ns += it.end_ns - it.start_ns;
  EXPECT_GT(top_ns, r->timelines.a.length_ns / 4);
  EXPECT_GT(r->timelines.a.length_ns, r->timelines.b.length_ns);
}

// The CPU fixtures: no device work, so the host's top-level operators of one
// repetition, on the threads that ran them; no energy, so no power.
TEST(IterationTimeline, CpuPairLaysOutTheHostsOperators) {
  Pair p = LoadPair(std::string(MAGNETON_TEST_DATA) + "/diff/", "gelu_new", "gelu_fused");
  auto r = DiffPair(p, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->waste_count(), 1);
  for (const auto* t : {&r->timelines.a, &r->timelines.b}) {
    ExpectConsistent(*t, *r);
    EXPECT_FALSE(t->on_device);
    EXPECT_TRUE(t->power_w.empty());
    EXPECT_EQ(t->lanes[0].rfind("thread ", 0), 0u) << t->lanes[0];
    std::set<std::string> ops;
    for (const auto& it : t->items) ops.insert(it.name);
    EXPECT_TRUE(ops.count("aten::linear") || ops.count("aten::addmm")) << "GPT-2's projections are on it";
  }
  // a's GELU is eight operators where b's is one: more of a's items are the finding's.
  EXPECT_GT(ItemsOf(r->timelines.a, 0), ItemsOf(r->timelines.b, 0));
  EXPECT_GT(ItemsOf(r->timelines.b, 0), 0u);
}

// Without measured passes, the recorded runs themselves are laid out.
TEST(IterationTimeline, WithoutMeasuredPassesTheRecordedRunIsTheIteration) {
  Pair p = LoadPair(std::string(MAGNETON_TEST_DATA) + "/diff/", "gelu_new", "gelu_fused");
  // Runs whose own times are the program's (recording passes alone are refused: their times are the fingerprinting's).
  p.a.info.extra.erase(kFingerprintsKey);
  p.b.info.extra.erase(kFingerprintsKey);
  auto r = DiffPair(p, false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectConsistent(r->timelines.a, *r);
  EXPECT_NE(r->timelines.a.what.find("recorded run"), std::string::npos) << r->timelines.a.what;
  size_t top_level = std::count_if(p.a.ops.begin(), p.a.ops.end(), [](const Op& op) { return op.parent == kNone; });
  EXPECT_EQ(r->timelines.a.items.size(), top_level);
}

}  // namespace
}  // namespace magneton::analysis
