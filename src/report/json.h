// Machine-readable diff and check results. The layout is a stable contract,
// documented in docs/json-schema.md; schema_version changes when it breaks.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/diff/diff.h"
#include "analysis/diff/regression.h"

namespace magneton::report {

struct RunPaths {
  std::string a, b;  // the files the runs were loaded from
};

nlohmann::json DiffToJson(const analysis::DiffReport& report, const RunPaths& paths);
nlohmann::json CheckToJson(const analysis::DiffReport& report, const analysis::RegressionReport& check,
                           const RunPaths& paths);

}  // namespace magneton::report
