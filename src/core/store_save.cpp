// Whole-file operations on the run store: SaveRun writes an in-memory Run
// through RunWriter; AppendReplays adds the replay pass's measurements to a
// finished run file.
#include <fmt/core.h>

#include "core/sqlite_util.h"
#include "core/store.h"
#include "core/store_open.h"
#include "core/store_rows.h"
#include "core/store_sink.h"

namespace magneton {

Status SaveRun(const Run& run, const std::string& path, bool overwrite) {
  auto created = RunWriter::Create(path, run.info, overwrite);
  if (!created) return created.error();
  RunWriter& w = **created;
  // Referenced tables first, so a partial file never points forward.
  for (const auto& d : run.devices) MAGNETON_RETURN_IF_ERROR(w.Add(d));
  for (const auto& f : run.frames) MAGNETON_RETURN_IF_ERROR(w.Add(f));
  for (const auto& s : run.stacks) MAGNETON_RETURN_IF_ERROR(w.Add(s));
  for (const auto& t : run.tensors) MAGNETON_RETURN_IF_ERROR(w.Add(t));
  for (const auto& o : run.ops) MAGNETON_RETURN_IF_ERROR(w.Add(o));
  for (const auto& k : run.kernels) MAGNETON_RETURN_IF_ERROR(w.Add(k));
  for (const auto& t : run.transfers) MAGNETON_RETURN_IF_ERROR(w.Add(t));
  for (const auto& a : run.api_calls) MAGNETON_RETURN_IF_ERROR(w.Add(a));
  for (const auto& r : run.ranges) MAGNETON_RETURN_IF_ERROR(w.Add(r));
  for (const auto& s : run.series) MAGNETON_RETURN_IF_ERROR(w.AddSeries(s));
  for (const auto& m : run.replays) MAGNETON_RETURN_IF_ERROR(w.Add(m));
  for (const auto& [k, v] : run.config) MAGNETON_RETURN_IF_ERROR(w.SetConfig(k, v));
  for (const auto& s : run.stats) MAGNETON_RETURN_IF_ERROR(w.Add(s));
  return w.Close();
}

Status AppendReplays(const std::string& path, const std::vector<ReplayMeasurement>& replays) {
  auto opened = store::OpenStore(path, /*writable=*/true);
  if (!opened) return opened.error();
  sqlite::Db& db = opened->db;
  auto sql = [&](int rc) { return sqlite::SqlError(path, rc, db.errmsg()); };
  int rc = db.Exec("BEGIN IMMEDIATE");
  if (rc != SQLITE_OK) return sql(rc);
  sqlite::Stmt count, insert;
  if ((rc = count.Prepare(db, "SELECT count(*) FROM replays")) != SQLITE_OK) return sql(rc);
  if ((rc = count.Step()) != SQLITE_ROW) return sql(rc);
  int64_t id = count.Int64(0);  // ids stay dense: the new rows follow the old
  count = sqlite::Stmt{};
  const auto kind = store::kRowKindOf<ReplayMeasurement>;
  if ((rc = insert.Prepare(db, store::Statements()[static_cast<size_t>(kind)].sql)) != SQLITE_OK) return sql(rc);
  // Replays hold no interned names (this file's strings are not loaded here):
  // a replays column that needs one fails instead of writing a wrong id.
  bool named = false;
  auto no_names = [&named](auto) -> int64_t {
    named = true;
    return kNone;
  };
  store::Batch batch;
  for (ReplayMeasurement m : replays) {
    m.id = id++;
    batch.Clear();
    store::Row& row = batch.Push(kind);
    store::EncodeRow(tables::kReplays, m, batch, no_names, row.v);
    if (named)
      return MakeError(ErrorCode::kInternal, fmt::format("{}: a replays column needs a string id", path));
    store::BindRow(insert, 1, row, batch);
    if ((rc = insert.Run()) != SQLITE_DONE) return sql(rc);  // closing the Db rolls back
  }
  insert = sqlite::Stmt{};
  if ((rc = db.Exec("COMMIT")) != SQLITE_OK) return sql(rc);
  return Status::Ok();
}

}  // namespace magneton
