// Collective waits across the ranks of a distributed job (src/analysis/ranks):
// synthetic runs with known arrivals and power, and real 2-process gloo DDP
// recordings (tests/data/dist, made by tests/data/dist/make_fixtures.py).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/ranks/collectives.h"
#include "core/store.h"

namespace magneton::analysis {
namespace {

constexpr int64_t kMs = 1'000'000;

Op MakeOp(int64_t id, const std::string& name, int64_t start, int64_t end, int64_t parent = kNone) {
  Op o;
  o.id = id;
  o.name = name;
  o.start_ns = start;
  o.end_ns = end;
  o.parent = parent;
  return o;
}

// A rank that computes, then enters collectives at the given arrival times
// (ms), each lasting until `done` (ms); GPU power `watts` when given.
magneton::Run MakeRank(int rank, int world, const std::vector<int64_t>& arrivals_ms, int64_t done_ms, double watts = 0,
             const std::string& job = "job-1") {
  magneton::Run run;
  run.info.host = "host-a";
  run.info.start_ns = 0;
  run.info.end_ns = 1000 * kMs;
  run.info.extra = {{"rank", std::to_string(rank)}, {"world_size", std::to_string(world)},
                    {"dist.job", job},              {"dist.backend", "gloo"},
                    {"local_rank", std::to_string(rank)}};
  run.ops.push_back(MakeOp(0, "aten::mm", 0, 1 * kMs));
  for (int64_t a : arrivals_ms) {
    auto id = static_cast<int64_t>(run.ops.size());
    run.ops.push_back(MakeOp(id, "c10d::allreduce_", a * kMs, done_ms * kMs));
    run.ops.push_back(MakeOp(id + 1, "aten::copy_", a * kMs, a * kMs + 1, id));  // nested, not a collective
    done_ms += 1;
  }
  run.ops.push_back(MakeOp(static_cast<int64_t>(run.ops.size()), "aten::mm", 999 * kMs, 1000 * kMs));
  if (watts > 0) {
    Device d;
    d.id = 0;
    d.kind = "gpu";
    d.name = "Test GPU";
    d.ordinal = rank;
    run.devices.push_back(d);
    SensorSeries p{0, 0, "power.instant", "W", "nvml", {0, 1000 * kMs}, {watts, watts}};
    run.series.push_back(p);
  }
  return run;
}

TEST(DistCollectives, NamesCollectivesButNotPointToPoint) {
  for (const char* yes : {"c10d::allreduce_", "c10d::broadcast_", "c10d::allgather_", "c10d::_allgather_base_",
                          "c10d::reduce_scatter_", "c10d::barrier", "nccl:all_reduce", "gloo:broadcast"})
    EXPECT_TRUE(IsCollectiveName(yes)) << yes;
  for (const char* no : {"c10d::send", "c10d::recv_", "aten::all", "nccl:send", "allreduce", "aten::mm"})
    EXPECT_FALSE(IsCollectiveName(no)) << no;
}

TEST(DistCollectives, WaitIsTheTimeUntilTheLastRankArrived) {
  // Rank 0 arrives 10 ms, then 0 ms, then 30 ms before rank 1; rank 1 never waits.
  magneton::Run r0 = MakeRank(0, 2, {100, 300, 500}, 600, 200.0);
  magneton::Run r1 = MakeRank(1, 2, {110, 300, 530}, 600, 100.0);
  auto d = AnalyzeRanks({{"r1.mgt", &r1}, {"r0.mgt", &r0}});  // any order
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->world_size, 2);
  EXPECT_EQ(d->method, "arrival");
  EXPECT_EQ(d->aligned_calls, 3);
  ASSERT_EQ(d->ranks.size(), 2u);
  EXPECT_EQ(d->ranks[0].path, "r0.mgt");
  EXPECT_EQ(d->ranks[0].collectives, 3);
  EXPECT_EQ(d->ranks[0].wait_ns, 40 * kMs);
  EXPECT_EQ(d->ranks[0].waited_calls, 2);
  EXPECT_EQ(d->ranks[1].wait_ns, 0);
  EXPECT_TRUE(d->energy_measured);
  EXPECT_NEAR(d->ranks[0].joules, 200.0, 1e-6);     // 200 W for 1 s
  EXPECT_NEAR(d->ranks[0].wait_joules, 8.0, 1e-6);  // 200 W for 40 ms
  EXPECT_NEAR(d->ranks[1].wait_joules, 0.0, 1e-9);
  EXPECT_TRUE(d->notes.empty()) << d->notes.front();
}

TEST(DistCollectives, WithoutEnergyWaitsAreTimesOnly) {
  magneton::Run r0 = MakeRank(0, 2, {100}, 200), r1 = MakeRank(1, 2, {150}, 200);
  auto d = AnalyzeRanks({{"r0.mgt", &r0}, {"r1.mgt", &r1}});
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->energy_measured);
  EXPECT_TRUE(std::isnan(d->ranks[0].joules));
  EXPECT_TRUE(std::isnan(d->ranks[0].wait_joules));
  EXPECT_EQ(d->ranks[0].wait_ns, 50 * kMs);
}

TEST(DistCollectives, OverlappingCallsWaitOnceForTheSameTime) {
  // Two buckets launched 1 ms apart on rank 0; rank 1 joins both 50 ms later.
  magneton::Run r0 = MakeRank(0, 2, {100, 101}, 200), r1 = MakeRank(1, 2, {150, 151}, 200);
  auto d = AnalyzeRanks({{"r0.mgt", &r0}, {"r1.mgt", &r1}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->ranks[0].waited_calls, 2);
  EXPECT_EQ(d->ranks[0].wait_ns, 51 * kMs);  // [100, 151], not 50 + 50
  ASSERT_EQ(d->calls.size(), 2u);
  EXPECT_EQ(d->calls[1].wait_ns[0], 50 * kMs);
}

TEST(DistCollectives, UnequalSequencesAlignTheCommonPrefixWithANote) {
  magneton::Run r0 = MakeRank(0, 2, {100, 200, 300}, 400), r1 = MakeRank(1, 2, {100, 250}, 400);
  auto d = AnalyzeRanks({{"r0.mgt", &r0}, {"r1.mgt", &r1}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->aligned_calls, 2);
  EXPECT_EQ(d->ranks[0].wait_ns, 50 * kMs);
  ASSERT_EQ(d->notes.size(), 2u);  // energy unmeasured, unaligned tail
  EXPECT_NE(d->notes[1].find("aligned the first 2"), std::string::npos) << d->notes[1];
}

TEST(DistCollectives, DifferentHostsCompareDurations) {
  magneton::Run r0 = MakeRank(0, 2, {100}, 300), r1 = MakeRank(1, 2, {5000}, 5050);
  r1.info.host = "host-b";
  auto d = AnalyzeRanks({{"r0.mgt", &r0}, {"r1.mgt", &r1}});
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->method, "duration");
  EXPECT_EQ(d->ranks[0].wait_ns, 150 * kMs);  // 200 ms in the call against rank 1's 50 ms
  EXPECT_EQ(d->ranks[1].wait_ns, 0);
}

TEST(DistCollectives, RefusesSetsThatAreNotOneWholeJob) {
  magneton::Run r0 = MakeRank(0, 2, {100}, 200), r1 = MakeRank(1, 2, {100}, 200);
  magneton::Run other = MakeRank(1, 2, {100}, 200, 0, "job-2");
  magneton::Run three = MakeRank(1, 3, {100}, 200);
  magneton::Run plain = MakeRank(0, 2, {100}, 200);
  plain.info.extra.clear();
  magneton::Run later = MakeRank(1, 2, {100}, 200);
  for (auto& o : later.ops) {  // recorded 5 s after the others
    o.start_ns += 5000 * kMs;
    o.end_ns += 5000 * kMs;
  }
  struct Case {
    std::vector<RankInput> in;
    std::string says;
  };
  std::vector<Case> cases = {
      {{{"a0.mgt", &r0}}, "a0.mgt: rank 1 of world size 2 missing"},
      {{{"a0.mgt", &r0}, {"b1.mgt", &other}}, "b1.mgt: job 'job-2', but a0.mgt is job 'job-1': files of different jobs"},
      {{{"a0.mgt", &r0}, {"c1.mgt", &three}}, "c1.mgt: world size 3, but a0.mgt has world size 2"},
      {{{"a0.mgt", &r0}, {"a0again.mgt", &r0}}, "a0again.mgt: rank 0 is also a0.mgt"},
      {{{"p.mgt", &plain}, {"a1.mgt", &r1}}, "p.mgt: not a rank of a distributed job"},
      {{{"a0.mgt", &r0}, {"l1.mgt", &later}}, "l1.mgt: recorded at another time than a0.mgt"},
  };
  for (const auto& c : cases) {
    auto d = AnalyzeRanks(c.in);
    ASSERT_FALSE(d.ok()) << c.says;
    EXPECT_EQ(d.error().message.find(c.says), 0u) << d.error().message;
    EXPECT_EQ(d.error().message.find('\n'), std::string::npos);
  }
}

TEST(DistCollectives, DiffNamesTheCostlierSetAndTheWaitingRank) {
  // a: rank 1 waits 300 ms for rank 0 in its last call; b: nobody waits, shorter.
  magneton::Run a0 = MakeRank(0, 2, {100, 900}, 950, 100.0), a1 = MakeRank(1, 2, {100, 600}, 950, 100.0);
  magneton::Run b0 = MakeRank(0, 2, {100}, 150, 100.0), b1 = MakeRank(1, 2, {100}, 150, 100.0);
  for (magneton::Run* r : {&b0, &b1}) {
    r->info.end_ns = 700 * kMs;
    r->ops.back().start_ns = 699 * kMs;
    r->ops.back().end_ns = 700 * kMs;
  }
  auto d = DiffRankSets({{"a0", &a0}, {"a1", &a1}}, {{"b0", &b0}, {"b1", &b1}}, 0.10);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->unit, "J");
  EXPECT_NEAR(d->total_a, 200.0, 1e-6);
  EXPECT_NEAR(d->total_b, 140.0, 1e-6);
  EXPECT_TRUE(d->waste);
  EXPECT_EQ(d->costlier, 'a');
  EXPECT_NEAR(d->saving_pct, 0.30, 1e-9);
  EXPECT_NEAR(d->ranks[1].wait_a, 30.0, 1e-6);  // 300 ms at 100 W
  EXPECT_NE(d->finding.find("Rank 1 waits 300 ms"), std::string::npos) << d->finding;
  EXPECT_NE(d->finding.find("runs 2 collectives on rank 1, b runs 1"), std::string::npos) << d->finding;
}

// --- real recordings: 2 gloo ranks on the CPU, 13 and 10 batches ------------------

std::vector<magneton::Run> LoadSet(const std::string& stem) {
  std::vector<magneton::Run> runs;
  for (int r = 0; r < 2; ++r) {
    auto run = LoadRun(std::string(MAGNETON_TEST_DATA) + "/dist/" + stem + ".rank" + std::to_string(r) + ".mgt");
    EXPECT_TRUE(run.ok()) << run.error().message;
    if (run.ok()) runs.push_back(std::move(*run));
  }
  return runs;
}

std::vector<RankInput> Inputs(const std::vector<magneton::Run>& runs, const std::string& stem) {
  std::vector<RankInput> in;
  for (size_t r = 0; r < runs.size(); ++r) in.push_back({stem + ".rank" + std::to_string(r), &runs[r]});
  return in;
}

TEST(DistRecorded, RanksCarryTheirIdentity) {
  auto runs = LoadSet("join");
  ASSERT_EQ(runs.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    auto id = ReadRankIdentity(runs[r], "join");
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(id->rank, r);
    EXPECT_EQ(id->world_size, 2);
    EXPECT_EQ(id->backend, "gloo");
    EXPECT_FALSE(id->job.empty());
    EXPECT_NE(runs[r].info.extra.at("dist.clock").find("CLOCK_MONOTONIC"), std::string::npos);
  }
}

TEST(DistRecorded, EveryRankRunsTheSameCollectivesInTheSameOrder) {
  for (const char* stem : {"join", "early_exit"}) {
    auto runs = LoadSet(stem);
    ASSERT_EQ(runs.size(), 2u);
    auto d = AnalyzeRanks(Inputs(runs, stem));
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d->method, "arrival");
    EXPECT_EQ(d->ranks[0].collectives, d->ranks[1].collectives) << stem;
    EXPECT_EQ(d->aligned_calls, d->ranks[0].collectives) << stem;
    EXPECT_GT(d->aligned_calls, 10) << stem;
    EXPECT_FALSE(d->energy_measured);  // CPU recordings: times only
  }
}

TEST(DistRecorded, JoinKeepsTheRankWithLessDataInCollectives) {
  auto join = LoadSet("join"), early = LoadSet("early_exit");
  auto dj = AnalyzeRanks(Inputs(join, "join"));
  auto de = AnalyzeRanks(Inputs(early, "early_exit"));
  ASSERT_TRUE(dj.ok() && de.ok());
  // dist.Join: rank 1 (10 batches) shadows rank 0's collectives for its 3 extra
  // steps; the early exit stops both at 10 steps, so it runs fewer collectives.
  EXPECT_GT(dj->ranks[1].collectives, de->ranks[1].collectives);
  // The shadowed gradient buckets: rank 0 launches them from its backward pass
  // (inside an autograd op), rank 1 from Join's hook at top level, with no
  // forward or backward to run first. So rank 1 arrives first and waits for
  // rank 0's whole step, in every one of them; rank 0 never waits there.
  int shadowed = 0;
  int64_t wait0 = 0, wait1 = 0;
  for (const auto& c : dj->calls) {
    bool backward0 = join[0].ops[c.op[0]].parent != kNone;
    bool backward1 = join[1].ops[c.op[1]].parent != kNone;
    if (!backward0 || backward1) continue;
    ++shadowed;
    wait0 += c.wait_ns[0];
    wait1 += c.wait_ns[1];
  }
  EXPECT_GE(shadowed, 3);  // at least one bucket per extra step
  EXPECT_GT(wait1, 3 * kMs);
  EXPECT_GT(wait1, 10 * wait0);
  // The early exit has no shadowed calls: both ranks launch every bucket from backward.
  for (const auto& c : de->calls)
    EXPECT_EQ(early[0].ops[c.op[0]].parent != kNone, early[1].ops[c.op[1]].parent != kNone);
}

TEST(DistRecorded, DiffComparesTheRankSets) {
  auto join = LoadSet("join"), early = LoadSet("early_exit");
  auto d = DiffRankSets(Inputs(join, "join"), Inputs(early, "early_exit"), 0.10);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->unit, "s");  // CPU recordings: device time stands in for energy
  ASSERT_EQ(d->ranks.size(), 2u);
  EXPECT_GT(d->ranks[1].collectives_a, d->ranks[1].collectives_b);
  EXPECT_GT(d->total_a, 0);
  EXPECT_GT(d->total_b, 0);
  EXPECT_FALSE(d->finding.empty());
  // Which side is costlier on a 2-core CPU is timing noise (docs/distributed.md):
  // no assertion on the direction here.
}

}  // namespace
}  // namespace magneton::analysis
