// `magneton top RUN`: kernels, NVTX ranges or operators of a run by energy.
// `magneton top RUN0 RUN1 ...`: every rank of a distributed job, per rank
// (energy, time, time and energy waiting in collectives; docs/distributed.md).
#include <fmt/core.h>

#include "analysis/ranks/collectives.h"
#include "cli/commands.h"
#include "core/store.h"
#include "energy/attribution.h"
#include "report/dist.h"
#include "report/replay_table.h"
#include "report/top.h"

namespace magneton::cli {
namespace {

struct TopArgs {
  std::vector<std::string> runs;
  std::string by = "kernel";
  size_t limit = 20;
  bool json = false;
};

int TopRanks(const TopArgs& a) {
  std::vector<Run> runs;
  runs.reserve(a.runs.size());
  for (const auto& path : a.runs) {
    auto run = LoadRun(path);
    if (!run.ok()) return Fail(run.error());
    runs.push_back(std::move(*run));
  }
  std::vector<analysis::RankInput> inputs;
  for (size_t i = 0; i < runs.size(); ++i) inputs.push_back({a.runs[i], &runs[i]});
  auto dist = analysis::AnalyzeRanks(inputs);
  if (!dist.ok()) return Fail(dist.error());
  if (a.json)
    fmt::print("{}\n", report::RankTableToJson(*dist).dump(2));
  else
    fmt::print("{}", report::RenderRankTable(*dist));
  return kExitOk;
}

int Top(const TopArgs& a) {
  if (a.runs.size() > 1) return TopRanks(a);
  report::TopBy by;
  if (a.by == "kernel") by = report::TopBy::kKernel;
  else if (a.by == "range") by = report::TopBy::kRange;
  else if (a.by == "op") by = report::TopBy::kOp;
  else return Fail(MakeError(ErrorCode::kInvalidArgument, fmt::format("top: --by {}: expected kernel, range or op", a.by)));
  const std::string& path = a.runs.front();
  auto run = LoadRun(path);
  if (!run.ok()) return Fail(run.error());
  energy::Attribution attribution = energy::Attribute(*run);
  report::TopTable table = report::BuildTop(*run, attribution, by);
  if (a.json) {
    nlohmann::json j = report::TopToJson(table, a.limit);
    j["run"] = path;
    j["replays"] = report::ReplaysToJson(*run);
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}", report::RenderTop(table, fmt::format("{} (pid {})", path, run->info.pid), a.limit));
    fmt::print("{}", report::RenderReplays(*run, a.limit));
  }
  return kExitOk;
}

}  // namespace

void RegisterTop(CLI::App& app, Action& run) {
  auto args = std::make_shared<TopArgs>();
  auto* sub = app.add_subcommand(
      "top",
      "Kernels, NVTX ranges or operators of a run by energy (like nsys stats); with several rank files of one\n"
      "distributed job, a table per rank: energy, time, and time and energy waiting in collectives");
  sub->add_option("RUN", args->runs, "Run file (.mgt); or every rank's run file of one job")->required();
  sub->add_option("--by", args->by, "Group by kernel, range or op")->default_val("kernel");
  sub->add_option("-n", args->limit, "Show the first N rows (0: all)")->default_val(20);
  sub->add_flag("--json", args->json, "Print as JSON");
  sub->callback([args, &run] { run = [args] { return Top(*args); }; });
}

}  // namespace magneton::cli
