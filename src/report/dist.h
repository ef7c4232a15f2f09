// Tables and JSON for a set of rank runs (`magneton top RUN...`) and for two
// sets compared (`magneton diff A0,A1 B0,B1`): docs/distributed.md.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/ranks/collectives.h"

namespace magneton::report {

std::string RenderRankTable(const analysis::DistAnalysis& d);
nlohmann::json RankTableToJson(const analysis::DistAnalysis& d);
std::string RenderRankDiff(const analysis::DistDiff& d);
nlohmann::json RankDiffToJson(const analysis::DistDiff& d);

}  // namespace magneton::report
