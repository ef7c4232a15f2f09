// Keeping some rows of a run's table, with their ids numbered densely again
// (ids are positions: core/run.h) and references to them mapped.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/run.h"

namespace magneton::analysis {

// Keeps the rows `keep` selects, numbered densely again; returns old id -> new id.
template <class T, class Keep>
std::unordered_map<int64_t, int64_t> Select(std::vector<T>& rows, Keep keep) {
  std::unordered_map<int64_t, int64_t> ids;
  std::vector<T> kept;
  for (auto& r : rows)
    if (keep(r)) {
      ids.emplace(r.id, static_cast<int64_t>(kept.size()));
      r.id = static_cast<int64_t>(kept.size());
      kept.push_back(std::move(r));
    }
  rows = std::move(kept);
  return ids;
}

// A reference through Select's map: kNone where the row it named is gone.
inline int64_t Mapped(const std::unordered_map<int64_t, int64_t>& ids, int64_t id) {
  if (id < 0) return id;  // kNone, kRecorderWork
  auto it = ids.find(id);
  return it == ids.end() ? kNone : it->second;
}

}  // namespace magneton::analysis
