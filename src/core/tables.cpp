#include "core/tables.h"

#include <fmt/core.h>

namespace magneton::tables {
namespace {

// As schema 1.0 declared them: names are integers (ids into strings).
std::string_view SqlType(Codec codec) {
  switch (codec) {
    case Codec::kId: return "INTEGER PRIMARY KEY";
    case Codec::kInt:
    case Codec::kBool:
    case Codec::kName: return "INTEGER NOT NULL";
    case Codec::kReal: return "REAL NOT NULL";
    case Codec::kText:
    case Codec::kInts: return "TEXT NOT NULL";
    case Codec::kFingerprint: return "BLOB";
  }
  return "";
}

// How the writer binds a column's queued integer (store_rows.h, StatementSpec).
char BindCode(Codec codec) {
  switch (codec) {
    case Codec::kId: return 'r';
    case Codec::kInt:
    case Codec::kBool:
    case Codec::kName: return 'i';
    case Codec::kReal: return 'd';
    case Codec::kText:
    case Codec::kInts: return 't';
    case Codec::kFingerprint: return 'b';
  }
  return '?';
}

}  // namespace

std::string CreateTableSql(std::string_view table, std::span<const ColumnInfo> columns) {
  std::string sql = fmt::format("CREATE TABLE {} (", table);
  for (size_t i = 0; i < columns.size(); ++i)
    sql += fmt::format("{}{} {}", i ? ", " : "", columns[i].name, SqlType(columns[i].codec));
  return sql + ");\n";
}

std::string InsertSql(std::string_view table, std::span<const ColumnInfo> columns) {
  std::string names, values;
  for (size_t i = 0; i < columns.size(); ++i) {
    names += fmt::format("{}{}", i ? ", " : "", columns[i].name);
    values += i ? ",?" : "?";
  }
  return fmt::format("INSERT INTO {}({}) VALUES({})", table, names, values);
}

std::string SelectSql(std::string_view table, std::span<const ColumnInfo> columns, int schema_minor) {
  std::string names;
  for (const ColumnInfo& c : columns)
    if (c.since <= schema_minor) names += fmt::format("{}{}", names.empty() ? "" : ", ", c.name);
  return fmt::format("SELECT {} FROM {}", names, table);
}

std::string BindSpec(std::span<const ColumnInfo> columns) {
  std::string spec;
  for (const ColumnInfo& c : columns) spec += BindCode(c.codec);
  return spec;
}

}  // namespace magneton::tables
