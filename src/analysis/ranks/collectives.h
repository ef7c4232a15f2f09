// Distributed runs: one run file per rank of a torch.distributed job
// (docs/distributed.md). Reads the rank metadata the recorder stores, checks a
// set of files is one whole job, finds each rank's collective calls, aligns the
// k-th call of every rank and measures how long each rank waited in it for a
// slower peer, in time and, where the rank's device energy was measured, joules.
// Pure over loaded Runs: no capture code, no GPU.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/run.h"
#include "core/status.h"

namespace magneton::analysis {

// What a rank's RunInfo.extra says (keys written by magneton.record).
struct RankIdentity {
  int rank = 0;
  int world_size = 1;
  std::string job;       // "dist.job": shared by the ranks of one job ("" when unknown)
  std::string backend;   // "dist.backend": gloo, nccl, ... ("" when unknown)
  std::string host;
};

// The run's rank, or an error naming `path` when it carries none.
Result<RankIdentity> ReadRankIdentity(const Run& run, const std::string& path);

// True for the collective operators a rank runs in step with its peers:
// c10d::allreduce_, c10d::broadcast_, c10d::allgather_, c10d::_allgather_base_,
// c10d::reduce_scatter_, c10d::barrier, ... and the process groups' own
// profiling names (nccl:all_reduce, gloo:broadcast, ...). Point-to-point
// send/recv are not collectives: only two ranks take part.
bool IsCollectiveName(std::string_view name);

struct CollectiveCall {
  int64_t op = kNone;         // Run::ops id (kNone for a range)
  std::string name;
  int64_t start_ns = 0, end_ns = 0;
};

// A rank's collective calls in start order: operators first (the outermost
// collective when they nest); when it has none, ranges with collective names.
std::vector<CollectiveCall> FindCollectives(const Run& run);

struct RankInput {
  std::string path;
  const Run* run = nullptr;
};

struct RankSummary {
  int rank = 0;
  std::string path;
  int32_t device = kNone;           // the device whose energy is the rank's (kNone: none measured)
  std::string device_name;
  int64_t run_ns = 0;               // the recording's span
  double joules = 0;                // the device's energy over the span (NaN: unmeasured)
  int64_t collectives = 0;          // collective calls of the rank
  int64_t collective_ns = 0;        // summed duration of those calls as recorded
  int64_t wait_ns = 0;              // time waiting for a slower peer, over the aligned calls
  int64_t waited_calls = 0;         // aligned calls in which it waited at all
  double wait_joules = 0;           // the device's energy during those waits (NaN: unmeasured)
};

struct CallWait {
  std::string name;
  std::vector<int64_t> op;          // per rank (index = rank): Run::ops id, kNone for a range
  std::vector<int64_t> start_ns;    // per rank
  std::vector<int64_t> wait_ns;     // per rank
};

struct DistAnalysis {
  int world_size = 0;
  std::string job;
  std::string backend;
  std::string method;               // "arrival" (one host's clock) or "duration" (clocks not comparable)
  bool energy_measured = false;     // every rank has its device's energy
  int64_t aligned_calls = 0;
  std::vector<RankSummary> ranks;   // index = rank
  std::vector<CallWait> calls;      // the aligned calls, in order
  std::vector<std::string> notes;   // what limits the result (unaligned tails, clocks, energy)
};

// Checks the runs are every rank of one job (each once, same world size and
// job), orders them by rank and computes the waits. Errors are one line naming
// the file: not a rank run, a different job, a duplicate or missing rank.
Result<DistAnalysis> AnalyzeRanks(const std::vector<RankInput>& ranks);

// Two sets of rank runs of the same job shape, compared: per rank energy
// (time where either side is unmeasured) and waits.
struct RankDelta {
  int rank = 0;
  double cost_a = 0, cost_b = 0;    // joules, or seconds when unit == "s"
  double wait_a = 0, wait_b = 0;    // same unit
  int64_t collectives_a = 0, collectives_b = 0;
};

struct DistDiff {
  DistAnalysis a, b;
  std::string unit;                 // "J" or "s"
  std::vector<RankDelta> ranks;
  double total_a = 0, total_b = 0;
  double wait_a = 0, wait_b = 0;
  char costlier = 0;                // 'a', 'b', or 0 when within the threshold
  double saving = 0;                // total of the costlier side minus the other, in unit
  double saving_pct = 0;            // of the costlier side's total
  bool waste = false;               // saving_pct >= threshold
  std::string finding;              // one paragraph: what differs and where it goes
};

Result<DistDiff> DiffRankSets(const std::vector<RankInput>& a, const std::vector<RankInput>& b, double threshold);

}  // namespace magneton::analysis
