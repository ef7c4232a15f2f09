#include "core/schema.h"

namespace magneton::schema {

// Hot tables (ops, op_io, tensors, kernels, transfers, api_calls, ranges,
// samples) hold integers only: names are ids into `strings`, so a row is a
// few bytes of varints and an insert binds no text. -1 means "none" in every
// reference column, as in run.h. No indexes: rows arrive in id order and are
// read back by scanning, so an index would only slow the writer.
const char* const kCreateSql = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE run_info (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);
CREATE TABLE devices (
  id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, uuid TEXT NOT NULL,
  ordinal INTEGER NOT NULL, memory_bytes INTEGER NOT NULL);
CREATE TABLE ops (
  id INTEGER PRIMARY KEY, parent INTEGER NOT NULL, name INTEGER NOT NULL,
  op_schema INTEGER NOT NULL, framework INTEGER NOT NULL, sequence INTEGER NOT NULL,
  forward_op INTEGER NOT NULL, thread INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL, stack INTEGER NOT NULL, device INTEGER NOT NULL,
  args INTEGER NOT NULL);
CREATE TABLE op_io (
  op INTEGER NOT NULL, tensor INTEGER NOT NULL, position INTEGER NOT NULL,
  is_output INTEGER NOT NULL);
CREATE TABLE tensors (
  id INTEGER PRIMARY KEY, storage INTEGER NOT NULL, storage_offset INTEGER NOT NULL,
  version INTEGER NOT NULL, shape TEXT NOT NULL, strides TEXT NOT NULL,
  dtype INTEGER NOT NULL, device INTEGER NOT NULL, fingerprint BLOB, memory INTEGER NOT NULL);
CREATE TABLE kernels (
  id INTEGER PRIMARY KEY, name INTEGER NOT NULL, device INTEGER NOT NULL,
  stream INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,
  block_x INTEGER NOT NULL, block_y INTEGER NOT NULL, block_z INTEGER NOT NULL,
  registers INTEGER NOT NULL, static_smem INTEGER NOT NULL, dynamic_smem INTEGER NOT NULL,
  correlation INTEGER NOT NULL, op INTEGER NOT NULL, stack INTEGER NOT NULL);
CREATE TABLE transfers (
  id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, bytes INTEGER NOT NULL,
  device INTEGER NOT NULL, stream INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL, correlation INTEGER NOT NULL, op INTEGER NOT NULL,
  src_memory INTEGER NOT NULL, dst_memory INTEGER NOT NULL, synchronous INTEGER NOT NULL);
CREATE TABLE api_calls (
  id INTEGER PRIMARY KEY, name INTEGER NOT NULL, domain INTEGER NOT NULL,
  thread INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  correlation INTEGER NOT NULL, stack INTEGER NOT NULL, count INTEGER NOT NULL);
CREATE TABLE ranges (
  id INTEGER PRIMARY KEY, name INTEGER NOT NULL, domain INTEGER NOT NULL,
  thread INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  parent INTEGER NOT NULL);
CREATE TABLE frames (
  id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, function INTEGER NOT NULL,
  file INTEGER NOT NULL, line INTEGER NOT NULL, module INTEGER NOT NULL);
CREATE TABLE stacks (id INTEGER PRIMARY KEY, depth INTEGER NOT NULL);
CREATE TABLE stack_frames (
  stack INTEGER NOT NULL, position INTEGER NOT NULL, frame INTEGER NOT NULL);
CREATE TABLE series (
  id INTEGER PRIMARY KEY, device INTEGER NOT NULL, sensor INTEGER NOT NULL,
  unit INTEGER NOT NULL, source INTEGER NOT NULL);
CREATE TABLE samples (series INTEGER NOT NULL, t_ns INTEGER NOT NULL, value REAL NOT NULL);
CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE replays (
  id INTEGER PRIMARY KEY, op INTEGER NOT NULL, key TEXT NOT NULL, device INTEGER NOT NULL,
  calls INTEGER NOT NULL, repeats INTEGER NOT NULL, seconds_per_call REAL NOT NULL,
  joules_per_call REAL NOT NULL, idle_watts REAL NOT NULL, cv REAL NOT NULL,
  status TEXT NOT NULL);
CREATE TABLE stats (
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

}  // namespace magneton::schema
