// The terminal report of a diff or a regression check: findings ranked by
// what they would save, each with its evidence and recommendations.
#pragma once

#include <string>

#include "analysis/diff/diff.h"
#include "analysis/diff/regression.h"

namespace magneton::report {

struct TableOptions {
  bool color = false;       // ANSI colors (the CLI turns them on for a TTY only)
  bool show_noise = false;  // list noise groups too (else only counted)
  int max_findings = 20;    // waste and trade-offs shown in full
  std::string path_a = "a", path_b = "b";
};

std::string RenderDiffTable(const analysis::DiffReport& report, const TableOptions& options);
std::string RenderCheckTable(const analysis::DiffReport& report, const analysis::RegressionReport& check,
                             const TableOptions& options);

}  // namespace magneton::report
