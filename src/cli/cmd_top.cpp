// `magneton top RUN`: kernels, NVTX ranges or operators of a run by energy.
#include <fmt/core.h>

#include "cli/commands.h"
#include "core/store.h"
#include "energy/attribution.h"
#include "report/top.h"

namespace magneton::cli {
namespace {

struct TopArgs {
  std::string run;
  std::string by = "kernel";
  size_t limit = 20;
  bool json = false;
};

int Top(const TopArgs& a) {
  report::TopBy by;
  if (a.by == "kernel") by = report::TopBy::kKernel;
  else if (a.by == "range") by = report::TopBy::kRange;
  else if (a.by == "op") by = report::TopBy::kOp;
  else return Fail(MakeError(ErrorCode::kInvalidArgument, fmt::format("top: --by {}: expected kernel, range or op", a.by)));
  auto run = LoadRun(a.run);
  if (!run.ok()) return Fail(run.error());
  energy::Attribution attribution = energy::Attribute(*run);
  report::TopTable table = report::BuildTop(*run, attribution, by);
  if (a.json) {
    nlohmann::json j = report::TopToJson(table, a.limit);
    j["run"] = a.run;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}", report::RenderTop(table, fmt::format("{} (pid {})", a.run, run->info.pid), a.limit));
  }
  return kExitOk;
}

}  // namespace

void RegisterTop(CLI::App& app, Action& run) {
  auto args = std::make_shared<TopArgs>();
  auto* sub = app.add_subcommand("top", "Kernels, NVTX ranges or operators of a run by energy (like nsys stats)");
  sub->add_option("RUN", args->run, "Run file (.mgt)")->required();
  sub->add_option("--by", args->by, "Group by kernel, range or op")->default_val("kernel");
  sub->add_option("-n", args->limit, "Show the first N rows (0: all)")->default_val(20);
  sub->add_flag("--json", args->json, "Print as JSON");
  sub->callback([args, &run] { run = [args] { return Top(*args); }; });
}

}  // namespace magneton::cli
