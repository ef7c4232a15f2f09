#include "core/schema.h"

#include "core/tables.h"

namespace magneton::schema {

// Hot tables (ops, op_io, tensors, kernels, transfers, api_calls, ranges,
// samples) hold integers only: names are ids into `strings`, so a row is a
// few bytes of varints and an insert binds no text. -1 means "none" in every
// reference column, as in run.h. No indexes: rows arrive in id order and are
// read back by scanning, so an index would only slow the writer. The tables
// of tables.h are generated from their column lists, the others written out
// here; the order is kTables'.
namespace {

std::string Create(const auto& table) { return tables::CreateTableSql(table.name, table.info); }

std::string MakeCreateSql() {
  using namespace tables;
  std::string sql = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE run_info (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);
)sql";
  sql += Create(kDevices) + Create(kOps);
  sql += R"sql(CREATE TABLE op_io (
  op INTEGER NOT NULL, tensor INTEGER NOT NULL, position INTEGER NOT NULL,
  is_output INTEGER NOT NULL);
)sql";
  sql += Create(kTensors) + Create(kKernels) + Create(kTransfers) + Create(kApiCalls) + Create(kRanges) +
         Create(kFrames);
  sql += R"sql(CREATE TABLE stacks (id INTEGER PRIMARY KEY, depth INTEGER NOT NULL);
CREATE TABLE stack_frames (
  stack INTEGER NOT NULL, position INTEGER NOT NULL, frame INTEGER NOT NULL);
)sql";
  sql += Create(kSeries);
  sql += R"sql(CREATE TABLE samples (series INTEGER NOT NULL, t_ns INTEGER NOT NULL, value REAL NOT NULL);
CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
)sql";
  sql += Create(kReplays);
  sql += R"sql(CREATE TABLE stats (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, severity TEXT NOT NULL,
  value INTEGER NOT NULL, description TEXT NOT NULL);

-- Views with names resolved, for people querying with sqlite3.
CREATE VIEW kernels_named AS
  SELECT k.*, s.value AS name_text FROM kernels k JOIN strings s ON s.id = k.name;
CREATE VIEW ops_named AS
  SELECT o.*, n.value AS name_text, f.value AS framework_text
  FROM ops o JOIN strings n ON n.id = o.name JOIN strings f ON f.id = o.framework;
CREATE VIEW api_calls_named AS
  SELECT a.*, s.value AS name_text FROM api_calls a JOIN strings s ON s.id = a.name;
CREATE VIEW frames_named AS
  SELECT fr.id, k.value AS kind, fn.value AS function, fl.value AS file, fr.line,
         m.value AS module
  FROM frames fr JOIN strings k ON k.id = fr.kind JOIN strings fn ON fn.id = fr.function
       JOIN strings fl ON fl.id = fr.file JOIN strings m ON m.id = fr.module;
CREATE VIEW samples_named AS
  SELECT sa.series, se.device, n.value AS sensor, u.value AS unit, sa.t_ns, sa.value
  FROM samples sa JOIN series se ON se.id = sa.series JOIN strings n ON n.id = se.sensor
       JOIN strings u ON u.id = se.unit;
)sql";
  return sql;
}

}  // namespace

const std::string& CreateSql() {
  static const std::string sql = MakeCreateSql();
  return sql;
}

}  // namespace magneton::schema
