// `magneton diff A.mgt B.mgt`: where one run spends more energy than the other
// for the same values, and why (docs/diff.md). Exit 1 when there is waste,
// 0 when there is none, 2 on bad input.
#include "cli/cmd_diff.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "analysis/diff/pass_split.h"
#include "analysis/diff/rules.h"
#include "analysis/ranks/collectives.h"
#include "cli/commands.h"
#include "core/store.h"
#include "report/dist.h"
#include "report/html.h"
#include "report/json.h"
#include "report/table.h"

namespace magneton::cli {

namespace fs = std::filesystem;

std::string ExecutableDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

void AddDiffOptions(CLI::App* cmd, DiffArgs& args) {
  cmd->add_option("--measured-a", args.measured_a,
                  "Measured pass of run a (same program, fingerprints off): costs come from it");
  cmd->add_option("--measured-b", args.measured_b, "Measured pass of run b");
  cmd->add_option("--tolerance", args.tolerance, "Relative fingerprint tolerance for matching")
      ->check(CLI::Range(1e-6, 0.5))
      ->capture_default_str();
  cmd->add_option("--iterations", args.iterations,
                  "Iterations the recording covers (default: from the run, else 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--rules", args.rules_dir, "Directory of rules/*.json (default: the installed rules)");
  cmd->add_flag("--json", args.json, "Print JSON (docs/json-schema.md) instead of the table");
  cmd->add_option("--html", args.html, "Also write a self-contained HTML report to this file");
  cmd->add_option("--color", args.color, "Colors in the table: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_flag("--all", args.all, "List the noise groups too");
  cmd->add_flag(
      "--absolute-time", args.absolute_time,
      "CPU-only runs: compare times as measured, without factoring out a machine-wide speed difference");
}

Result<double> ParsePercent(const std::string& text, const std::string& option) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || !end || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1000)
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("{} {}: expected a percentage such as 10% (0 < value <= 1000)", option, text));
  return v / 100;
}

std::string FindRulesDir(const std::string& explicit_dir) {
  if (!explicit_dir.empty()) return explicit_dir;
  if (const char* env = std::getenv("MAGNETON_RULES"); env && *env) return env;
  std::string exe = ExecutableDir();
  std::error_code ec;
  for (const char* rel : {"../rules", "../share/magneton/rules", "rules"}) {
    fs::path p = fs::path(exe) / rel;
    if (!exe.empty() && fs::is_directory(p, ec)) return fs::canonical(p, ec).string();
  }
  return "";
}

bool UseColor(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && !(no_color && *no_color);
}

Result<std::unique_ptr<DiffSession>> RunDiff(const DiffArgs& args, double threshold) {
  auto s = std::make_unique<DiffSession>();
  auto load = [](const std::string& path, Run* into) -> Status {
    auto r = LoadRun(path);
    if (!r.ok()) return r.error();
    *into = std::move(*r);
    return Status::Ok();
  };
  MAGNETON_RETURN_IF_ERROR(load(args.a, &s->a));
  MAGNETON_RETURN_IF_ERROR(load(args.b, &s->b));
  std::vector<std::string> split_notes;
  for (auto [path, run, slot, side] : {std::tuple{&args.measured_a, &s->a, &s->measured_a, 'a'},
                                       std::tuple{&args.measured_b, &s->b, &s->measured_b, 'b'}}) {
    // One file of both passes (recorded in one go): its recording pass is the run, its measured
    // pass the measured pass, unless another file is given for that.
    if (auto passes = analysis::SplitAtMeasuredPass(*run)) {
      *run = std::move(passes->recorded);
      if (path->empty()) {
        *slot = std::move(passes->measured);
        split_notes.push_back(fmt::format(
            "run {} holds both passes (recorded in one go): its recording pass and its measured pass are compared "
            "as two runs",
            side));
      }
    }
    if (!path->empty()) {
      slot->emplace();
      MAGNETON_RETURN_IF_ERROR(load(*path, &**slot));
      if (auto passes = analysis::SplitAtMeasuredPass(**slot)) {
        **slot = std::move(passes->measured);
        split_notes.push_back(fmt::format("{} holds both passes (recorded in one go): its measured pass is used", *path));
      }
    }
  }

  analysis::DiffOptions o;
  // Steps measured after tracing stopped: the iteration as the program runs, beside the traced one
  // (in a run with no measured pass: the program's own calls after record_jax's op-level executions on a CPU).
  o.untraced_a = analysis::TakeUntracedSteps(s->measured_a ? *s->measured_a : s->a);
  o.untraced_b = analysis::TakeUntracedSteps(s->measured_b ? *s->measured_b : s->b);
  o.threshold = threshold;
  o.match_tolerance = args.tolerance;
  o.iterations = args.iterations;
  o.normalize_host_time = !args.absolute_time;
  std::string rules_dir = FindRulesDir(args.rules_dir);
  std::string rules_note;
  if (rules_dir.empty()) {
    rules_note = "no rules directory found (--rules or MAGNETON_RULES): findings carry no recommendations";
  } else {
    auto rules = analysis::LoadRulesDir(rules_dir);
    if (!rules.ok()) return rules.error();
    o.rules = std::move(*rules);
  }
  auto report = analysis::DiffRuns(s->a, s->b, s->measured_a ? &*s->measured_a : nullptr,
                                   s->measured_b ? &*s->measured_b : nullptr, o);
  if (!report.ok()) {
    // The input the message is about: "measured pass of run a: ..." or "run b ...".
    const std::string& m = report.error().message;
    const bool of_a = m.find("run a") != std::string::npos && m.find("run a") <= m.find("run b");
    const bool measured = m.rfind("measured pass", 0) == 0;
    const std::string& run_path = of_a ? args.a : args.b;
    const std::string& measured_path = of_a ? args.measured_a : args.measured_b;
    // A measured pass split from the run's own file (no --measured-x) is that file's.
    const std::string& which = measured && !measured_path.empty() ? measured_path : run_path;
    return MakeError(report.error().code, fmt::format("{}: {}", which, m));
  }
  s->report = std::move(*report);
  s->report.notes.insert(s->report.notes.begin(), split_notes.begin(), split_notes.end());
  if (!rules_note.empty()) s->report.notes.push_back(rules_note);
  return s;
}

Status WriteHtml(const DiffSession& s, const DiffArgs& args) {
  std::ofstream out(args.html, std::ios::binary | std::ios::trunc);
  if (!out) return MakeError(ErrorCode::kIo, fmt::format("{}: cannot write the HTML report", args.html));
  // Power over time is in the measured passes when there are any.
  out << report::RenderHtml(s.report, s.measured_a ? *s.measured_a : s.a, s.measured_b ? *s.measured_b : s.b,
                            {args.a, args.b});
  out.close();
  if (!out) return MakeError(ErrorCode::kIo, fmt::format("{}: writing the HTML report failed", args.html));
  fmt::print(stderr, "magneton: wrote {}\n", args.html);
  return Status::Ok();
}

namespace {

struct DiffCommand {
  DiffArgs args;
  std::string threshold = "10%";
};

// A rank set: comma-separated run files, one per rank of a job. A path that
// exists is one file, commas and all.
std::vector<std::string> SplitRankSet(const std::string& arg) {
  std::error_code ec;
  if (fs::exists(arg, ec)) return {arg};
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= arg.size()) {
    size_t comma = arg.find(',', pos);
    if (comma == std::string::npos) comma = arg.size();
    if (comma > pos) out.push_back(arg.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

// `magneton diff A0,A1 B0,B1`: two jobs' rank sets, per rank energy and waits
// (docs/distributed.md).
int DiffRanks(const DiffCommand& cmd, const std::vector<std::string>& a, const std::vector<std::string>& b,
              double threshold) {
  if (a.size() < 2 || b.size() < 2)
    return Fail(MakeError(ErrorCode::kInvalidArgument,
                          fmt::format("{}: one run file; a rank set is every rank's file, comma-separated "
                                      "(magneton diff a.rank0.mgt,a.rank1.mgt b.rank0.mgt,b.rank1.mgt)",
                                      a.size() < 2 ? cmd.args.a : cmd.args.b)));
  if (!cmd.args.html.empty() || !cmd.args.measured_a.empty() || !cmd.args.measured_b.empty())
    return Fail(MakeError(ErrorCode::kInvalidArgument,
                          "rank sets: --html, --measured-a and --measured-b apply to single runs only"));
  std::vector<Run> runs;
  runs.reserve(a.size() + b.size());
  std::vector<analysis::RankInput> ia, ib;
  for (const auto* set : {&a, &b})
    for (const auto& path : *set) {
      auto run = LoadRun(path);
      if (!run.ok()) return Fail(run.error());
      runs.push_back(std::move(*run));
    }
  for (size_t i = 0; i < a.size(); ++i) ia.push_back({a[i], &runs[i]});
  for (size_t i = 0; i < b.size(); ++i) ib.push_back({b[i], &runs[a.size() + i]});
  auto d = analysis::DiffRankSets(ia, ib, threshold);
  if (!d.ok()) return Fail(d.error());
  if (cmd.args.json)
    fmt::print("{}\n", report::RankDiffToJson(*d).dump(2));
  else
    fmt::print("{}", report::RenderRankDiff(*d));
  return d->waste ? kExitFinding : kExitOk;
}

int Diff(const DiffCommand& cmd) {
  auto threshold = ParsePercent(cmd.threshold, "--threshold");
  if (!threshold.ok()) return Fail(threshold.error());
  if (*threshold < analysis::kMinThreshold - 1e-12)
    return Fail(MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("--threshold {}: below 5% the measurement noise decides, not the code", cmd.threshold)));
  auto set_a = SplitRankSet(cmd.args.a), set_b = SplitRankSet(cmd.args.b);
  if (set_a.size() > 1 || set_b.size() > 1) return DiffRanks(cmd, set_a, set_b, *threshold);
  auto session = RunDiff(cmd.args, *threshold);
  if (!session.ok()) return Fail(session.error());
  const DiffSession& s = **session;
  if (cmd.args.json) {
    fmt::print("{}\n", report::DiffToJson(s.report, {cmd.args.a, cmd.args.b}).dump(2));
  } else {
    report::TableOptions t;
    t.color = UseColor(cmd.args.color);
    t.show_noise = cmd.args.all;
    t.path_a = cmd.args.a;
    t.path_b = cmd.args.b;
    fmt::print("{}", report::RenderDiffTable(s.report, t));
  }
  if (!cmd.args.html.empty())
    if (auto st = WriteHtml(s, cmd.args); !st.ok()) return Fail(st.error());
  if (s.report.waste_count() > 0) return kExitFinding;
  return s.report.regions.empty() ? kExitNothingCompared : kExitOk;
}

}  // namespace

void RegisterDiff(CLI::App& app, Action& run) {
  auto cmd = std::make_shared<DiffCommand>();
  auto* sub = app.add_subcommand(
      "diff",
      "Find where one run spends more energy than the other for the same values, and why.\n"
      "Exit status: 0 no waste, 1 waste found, 2 bad input.");
  sub->add_option("A", cmd->args.a, "First run (.mgt), or every rank's run of a job, comma-separated")->required();
  sub->add_option("B", cmd->args.b, "Second run (.mgt), or a rank set like A")->required();
  sub->add_option("--threshold", cmd->threshold,
                  "Waste when one side spends at least this much more energy (>= 5%)")
      ->capture_default_str();
  AddDiffOptions(sub, cmd->args);
  sub->callback([cmd, &run] { run = [cmd] { return Diff(*cmd); }; });
}

}  // namespace magneton::cli
