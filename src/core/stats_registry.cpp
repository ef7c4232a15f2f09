#include "core/stats_registry.h"

#include <iterator>

namespace magneton {

namespace {

#define MAGNETON_STAT_ADDRESS(id, name, severity, description) &stats::id,
constexpr const StatDef* kAll[] = {MAGNETON_STATS(MAGNETON_STAT_ADDRESS)};
#undef MAGNETON_STAT_ADDRESS

}  // namespace

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kDataLoss:
      return "data_loss";
    case Severity::kError:
      return "error";
  }
  return "error";
}

std::span<const StatDef* const> AllStats() { return {std::begin(kAll), std::end(kAll)}; }

const StatDef* FindStat(std::string_view name) {
  for (const StatDef* def : kAll)
    if (def->name == name) return def;
  return nullptr;
}

Stat MakeStat(const StatDef& def, int64_t value, std::string description) {
  return Stat{std::string(def.name), std::string(SeverityName(def.severity)), value, std::move(description)};
}

Stat MakeStat(const StatDef& def, int64_t value) { return MakeStat(def, value, std::string(def.description)); }

void AddCount(std::vector<Stat>* stats, const StatDef& def, int64_t value) {
  if (value != 0) stats->push_back(MakeStat(def, value));
}

}  // namespace magneton
