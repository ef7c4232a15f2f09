// What `magneton diff`, `check` and `demo` share: loading the two runs (and
// their measured passes), finding the rules, running the diff, and turning
// "10%" into 0.10.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "analysis/diff/diff.h"
#include "core/run.h"
#include "core/status.h"

namespace magneton::cli {

struct DiffArgs {
  std::string a, b;                    // run files
  std::string measured_a, measured_b;  // optional measured passes
  double tolerance = 1e-2;             // fingerprint tolerance for matching
  int64_t iterations = 0;              // 0: from the runs
  std::string rules_dir;               // empty: search (FindRulesDir)
  bool json = false;
  std::string html;            // write the HTML report here
  std::string color = "auto";  // auto (TTY only), always, never
  bool all = false;            // list noise groups too
  bool absolute_time = false;  // no host-speed normalization of CPU times
};

// The loaded runs and their diff. Heap-held so findings stay put.
struct DiffSession {
  Run a, b;
  std::optional<Run> measured_a, measured_b;
  analysis::DiffReport report;
};

// Adds the options diff and check share (measured passes, tolerance,
// iterations, rules, --json, --html, --color, --all).
void AddDiffOptions(CLI::App* cmd, DiffArgs& args);

// "10%", "10" -> 0.10. Errors name the option.
Result<double> ParsePercent(const std::string& text, const std::string& option);

// The rules directory: `explicit_dir`, else $MAGNETON_RULES, else rules/ next
// to the build or install tree of this executable. Empty when none exists.
std::string FindRulesDir(const std::string& explicit_dir);

// Loads everything and diffs at `threshold`. Errors are one line naming the input.
Result<std::unique_ptr<DiffSession>> RunDiff(const DiffArgs& args, double threshold);

// Writes the HTML report; one line on stderr says where.
Status WriteHtml(const DiffSession& s, const DiffArgs& args);

bool UseColor(const std::string& mode);

// The directory this executable lives in.
std::string ExecutableDir();

}  // namespace magneton::cli
