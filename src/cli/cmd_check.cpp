// `magneton check --baseline BASE.mgt NEW.mgt --max-regression 5%`: an
// energy-regression gate for CI. Exit 1 listing what regressed, 0 when
// nothing did, 2 on bad input (docs/diff.md).
#include <fmt/core.h>

#include "analysis/diff/regression.h"
#include "cli/cmd_diff.h"
#include "cli/commands.h"
#include "report/json.h"
#include "report/table.h"

namespace magneton::cli {
namespace {

struct CheckCommand {
  DiffArgs args;  // a = baseline, b = new
  std::string max_regression = "5%";
};

int Check(const CheckCommand& cmd) {
  auto max = ParsePercent(cmd.max_regression, "--max-regression");
  if (!max.ok()) return Fail(max.error());
  auto session = RunDiff(cmd.args, *max);
  if (!session.ok()) return Fail(session.error());
  const DiffSession& s = **session;
  auto check = analysis::FindRegressions(s.report, *max);
  if (cmd.args.json) {
    fmt::print("{}\n", report::CheckToJson(s.report, check, {cmd.args.a, cmd.args.b}).dump(2));
  } else {
    report::TableOptions t;
    t.color = UseColor(cmd.args.color);
    t.path_a = cmd.args.a;
    t.path_b = cmd.args.b;
    fmt::print("{}", report::RenderCheckTable(s.report, check, t));
  }
  if (!cmd.args.html.empty())
    if (auto st = WriteHtml(s, cmd.args); !st.ok()) return Fail(st.error());
  return check.regressed() ? kExitFinding : kExitOk;
}

}  // namespace

void RegisterCheck(CLI::App& app, Action& run) {
  auto cmd = std::make_shared<CheckCommand>();
  auto* sub = app.add_subcommand("check",
                                 "Energy-regression gate: compare a new run with a baseline.\n"
                                 "Exit status: 0 nothing regressed, 1 regression (listed), 2 bad input.");
  sub->add_option("--baseline", cmd->args.a, "Baseline run (.mgt)")->required();
  sub->add_option("NEW", cmd->args.b, "New run (.mgt)")->required();
  sub->add_option("--max-regression", cmd->max_regression,
                  "Fail when the whole run or a matched region costs more than this much extra")
      ->capture_default_str();
  AddDiffOptions(sub, cmd->args);
  sub->callback([cmd, &run] { run = [cmd] { return Check(*cmd); }; });
}

}  // namespace magneton::cli
