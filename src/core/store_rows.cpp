#include "core/store_rows.h"

namespace magneton::store {
namespace {

std::array<StatementSpec, static_cast<size_t>(RowKind::kCount)> MakeStatements() {
  std::array<StatementSpec, static_cast<size_t>(RowKind::kCount)> s;
  auto set = [&](RowKind kind, std::string sql, std::string params) {
    s[static_cast<size_t>(kind)] = {std::move(sql), std::move(params)};
  };
  tables::ForEachTable([&](const auto& table) {
    set(kRowKindOf<typename std::remove_cvref_t<decltype(table)>::Row>, tables::InsertSql(table.name, table.info),
        tables::BindSpec(table.info));
  });
  set(RowKind::kString, "INSERT INTO strings(id, value) VALUES(?,?)", "rt");
  set(RowKind::kOpIo, "INSERT INTO op_io VALUES(?,?,?,?)", "iiii");
  set(RowKind::kStack, "INSERT INTO stacks VALUES(?,?)", "ri");
  set(RowKind::kStackFrame, "INSERT INTO stack_frames VALUES(?,?,?)", "iii");
  set(RowKind::kSample, "INSERT INTO samples VALUES(?,?,?)", "iid");
  set(RowKind::kConfig, "INSERT OR REPLACE INTO config VALUES(?,?)", "tt");
  // A stat of an existing name adds to it (Perfetto-style counters).
  set(RowKind::kStat,
      "INSERT INTO stats(name, severity, value, description) VALUES(?,?,?,?) "
      "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
      "ttit");
  set(RowKind::kLinkKernel, "UPDATE kernels SET op = ? WHERE id = ?", "ii");
  set(RowKind::kLinkTransfer, "UPDATE transfers SET op = ? WHERE id = ?", "ii");
  set(RowKind::kInfoClear, "DELETE FROM run_info", "");
  set(RowKind::kInfoPut, "INSERT OR REPLACE INTO run_info VALUES(?,?)", "tt");
  set(RowKind::kMetaPut, "INSERT OR REPLACE INTO meta VALUES(?,?)", "tt");
  return s;
}

}  // namespace

const std::array<StatementSpec, static_cast<size_t>(RowKind::kCount)>& Statements() {
  static const auto statements = MakeStatements();
  return statements;
}

}  // namespace magneton::store
