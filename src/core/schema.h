// The SQL schema of a run file (.mgt), version kSchemaMajor.kSchemaMinor.
// docs/run-format.md describes every table; keep the two in step.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace magneton::schema {

// meta.format of every run file; anything else is "not a run file".
inline constexpr std::string_view kFormat = "magneton-run";

// Keys of the meta table.
inline constexpr std::string_view kMetaFormat = "format";
inline constexpr std::string_view kMetaMajor = "schema_major";
inline constexpr std::string_view kMetaMinor = "schema_minor";
inline constexpr std::string_view kMetaWriter = "writer";
inline constexpr std::string_view kMetaComplete = "complete";  // "1" once Close ran

// run_info keys beyond the fixed RunInfo fields carry this prefix.
inline constexpr std::string_view kExtraPrefix = "extra.";

// Every table a reader needs, in creation order. A file without one of them
// is corrupt (or written by something else).
inline constexpr std::array<std::string_view, 19> kTables = {
    "meta",   "run_info",  "strings",  "devices",      "ops",    "op_io",   "tensors",
    "kernels", "transfers", "api_calls", "ranges",     "frames", "stacks",  "stack_frames",
    "series", "samples",   "config",   "replays",      "stats"};

// CREATE statements for all tables, in kTables order, and the convenience views.
const std::string& CreateSql();

}  // namespace magneton::schema
