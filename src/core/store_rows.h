// The writer's unit of work: rows encoded as fixed-size integer records,
// queued by RunWriter::Add on the caller's thread and inserted into SQLite
// by the store's writer thread (store_sink.h). Encoding a row is a copy of a
// few integers, so a caller (a CUPTI buffer callback) returns quickly.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace magneton::store {

// One per prepared statement, in kStatements order.
enum class RowKind : uint8_t {
  kString, kDevice, kOp, kOpIo, kTensor, kKernel, kTransfer, kApiCall, kRange, kFrame, kStack,
  kStackFrame, kSeries, kSample, kConfig, kReplay, kStat, kLinkKernel, kLinkTransfer, kInfoClear,
  kInfoPut, kMetaPut,
  kCount
};

// How each parameter is bound: 'i' int64, 'd' double (bits in the int64),
// 't' text (index into Batch::texts), 'b' blob (index, or -1 for NULL),
// 'r' a dense row id (INTEGER PRIMARY KEY): bound as NULL after the first row,
// so SQLite appends with rowid max+1 instead of searching the b-tree for the
// id; with ids dense from 0 (RunWriter enforces it) that is the same id, and
// it saves about a fifth of the insert time of a kernel row.
struct StatementSpec {
  const char* sql;
  std::string_view params;
};

inline constexpr std::array<StatementSpec, static_cast<size_t>(RowKind::kCount)> kStatements = {{
    {"INSERT INTO strings(id, value) VALUES(?,?)", "rt"},
    {"INSERT INTO devices VALUES(?,?,?,?,?,?)", "rtttii"},
    {"INSERT INTO ops VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", "riiiiiiiiiiii"},
    {"INSERT INTO op_io VALUES(?,?,?,?)", "iiii"},
    {"INSERT INTO tensors VALUES(?,?,?,?,?,?,?,?,?,?)", "riiittiibi"},
    {"INSERT INTO kernels VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", "riiiiiiiiiiiiiiiii"},
    {"INSERT INTO transfers VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", "riiiiiiiiiii"},
    {"INSERT INTO api_calls VALUES(?,?,?,?,?,?,?,?,?)", "riiiiiiii"},
    {"INSERT INTO ranges VALUES(?,?,?,?,?,?,?)", "riiiiii"},
    {"INSERT INTO frames VALUES(?,?,?,?,?,?)", "riiiii"},
    {"INSERT INTO stacks VALUES(?,?)", "ri"},
    {"INSERT INTO stack_frames VALUES(?,?,?)", "iii"},
    {"INSERT INTO series VALUES(?,?,?,?,?)", "riiii"},
    {"INSERT INTO samples VALUES(?,?,?)", "iid"},
    {"INSERT OR REPLACE INTO config VALUES(?,?)", "tt"},
    {"INSERT INTO replays(id, op, key, device, calls, repeats, seconds_per_call, joules_per_call, idle_watts, "
     "cv, status) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
     "ritiiiddddt"},
    // A stat of an existing name adds to it (Perfetto-style counters).
    {"INSERT INTO stats(name, severity, value, description) VALUES(?,?,?,?) "
     "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
     "ttit"},
    {"UPDATE kernels SET op = ? WHERE id = ?", "ii"},
    {"UPDATE transfers SET op = ? WHERE id = ?", "ii"},
    {"DELETE FROM run_info", ""},
    {"INSERT OR REPLACE INTO run_info VALUES(?,?)", "tt"},
    {"INSERT OR REPLACE INTO meta VALUES(?,?)", "tt"},
}};

inline constexpr size_t kMaxParams = 18;

struct Row {
  RowKind kind;
  int64_t v[kMaxParams];
};

// Rows in the order they were added, with the texts and blobs they refer to.
struct Batch {
  std::vector<Row> rows;
  std::vector<std::string> texts;

  Row& Push(RowKind kind) {
    Row& r = rows.emplace_back();
    r.kind = kind;
    return r;
  }
  int64_t Text(std::string_view s) {
    texts.emplace_back(s);
    return static_cast<int64_t>(texts.size() - 1);
  }
  void Clear() {
    rows.clear();
    texts.clear();
  }
  bool empty() const { return rows.empty(); }
};

}  // namespace magneton::store
