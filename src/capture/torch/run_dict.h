// Run rows as plain Python objects (dicts and lists), for tests and scripts
// that inspect a recording without a separate reader, and back (rows that
// the JAX recorder computes in Python). A row of a table of core/tables.h is
// a dict with a key per column (the column's Python key: its member's name).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <type_traits>
#include <vector>

#include "core/run.h"
#include "core/tables.h"

namespace magneton::capture {

pybind11::dict FingerprintDict(const Fingerprint& fp);
// The inverse of FingerprintDict; missing keys read as zero or empty.
Fingerprint FingerprintFromDict(const pybind11::dict& d);
// One Run::replays row; joules_per_call is None for a time-only replay.
pybind11::dict ReplayDict(const ReplayMeasurement& m);
// {"info", "devices", "ops", "tensors", "kernels", "frames", "stacks", "config", "stats", "series"}
pybind11::dict RunDict(const Run& run);

// `row` of `table` as {key: value}: texts as str, integer lists as lists, a
// fingerprint as FingerprintDict or None.
template <class T>
pybind11::dict RowDict(const T& table, const typename T::Row& row) {
  pybind11::dict d;
  tables::ForEachColumn(table, [&](const auto& c) {
    const auto& m = c.Of(row);
    pybind11::str key(c.py_key().data(), c.py_key().size());
    if constexpr (tables::kCodecOf<decltype(c)> == tables::Codec::kFingerprint)
      d[key] = m ? pybind11::object(FingerprintDict(*m)) : pybind11::none();
    else
      d[key] = m;
  });
  return d;
}

// Fills the members of *row whose keys `d` has (and not None); the others
// keep their values. Raises KeyError when a key of `required` is missing.
template <class T>
void RowFromDict(const T& table, const pybind11::dict& d, typename T::Row* row,
                 std::initializer_list<const char*> required = {}) {
  for (const char* key : required)
    if (!d.contains(key)) throw pybind11::key_error(key);
  tables::ForEachColumn(table, [&](const auto& c) {
    pybind11::str key(c.py_key().data(), c.py_key().size());
    if (!d.contains(key) || d[key].is_none()) return;
    auto& m = c.Of(*row);
    if constexpr (tables::kCodecOf<decltype(c)> == tables::Codec::kFingerprint)
      m = FingerprintFromDict(d[key].template cast<pybind11::dict>());
    else
      m = d[key].template cast<std::remove_cvref_t<decltype(m)>>();
  });
}

}  // namespace magneton::capture
