// Durability: the file is in WAL mode with synchronous=NORMAL while it is
// written. A commit appends to the -wal file without fsync, so the writer
// never waits on the disk, yet a committed transaction survives the process
// being killed (the OS already holds the bytes) and the database stays
// consistent on power loss (only the latest commits may roll back). A
// rollback journal would leave a killed run with a "hot" journal that only a
// writable connection may roll back, so read-only readers could not open it.
#include "core/store_sink.h"

#include <bit>

#include "core/schema.h"

namespace magneton::store {

Status StoreSink::Exec(const char* sql) {
  int rc = db_.Exec(sql);
  return rc == SQLITE_OK ? Status::Ok() : Status(Sql(rc));
}

Status StoreSink::Create() {
  std::string msg;
  // NOMUTEX: one thread uses the connection at a time, so SQLite's per-call
  // mutex would be pure overhead on every bind.
  int rc = db_.Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, &msg);
  if (rc != SQLITE_OK) return sqlite::SqlError(path_, rc, msg);
  // 4 KiB pages (SQLite's default): 16 and 64 KiB pages were no faster for
  // these rows (docs/benchmarks.md) and make every small run ~1 MB bigger,
  // since each table takes at least a page.
  MAGNETON_RETURN_IF_ERROR(
      Exec("PRAGMA page_size=4096; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536"));
  MAGNETON_RETURN_IF_ERROR(Exec("BEGIN"));
  MAGNETON_RETURN_IF_ERROR(Exec(schema::CreateSql().c_str()));
  for (size_t k = 0; k < kKinds; ++k) {
    const std::string_view sql = Statements()[k].sql;
    if ((rc = single_[k].Prepare(db_, sql)) != SQLITE_OK) return Sql(rc);
    // "INSERT INTO t VALUES(?,?)" -> "INSERT INTO t VALUES(?,?),(?,?),...": a statement's
    // fixed cost (cursor open, halt, reset) is then paid once per kMultiRows rows.
    const size_t values = sql.find(" VALUES(");
    if (!sql.starts_with("INSERT INTO ") || values == std::string_view::npos || !sql.ends_with(")")) continue;
    const std::string_view tuple = sql.substr(values + 7);
    std::string multi(sql);
    for (size_t i = 1; i < kMultiRows; ++i) (multi += ',') += tuple;
    if ((rc = multi_[k].Prepare(db_, multi)) != SQLITE_OK) return Sql(rc);
  }
  return Status::Ok();
}

namespace {

void Bind(sqlite::Stmt& s, int first, std::string_view params, const Row& r, const Batch& batch) {
  for (size_t i = 0; i < params.size(); ++i) {
    const int at = first + static_cast<int>(i);
    const int64_t v = r.v[i];
    switch (params[i]) {
      case 'i': s.Bind(at, v); break;
      case 'r':
        if (v > 0) s.BindNull(at);
        else s.Bind(at, v);
        break;
      case 'd': s.Bind(at, std::bit_cast<double>(v)); break;
      case 't': s.Bind(at, std::string_view(batch.texts[v])); break;
      case 'b':
        if (v < 0) s.BindNull(at);
        else s.BindBlob(at, batch.texts[v]);
        break;
    }
  }
}

}  // namespace

void BindRow(sqlite::Stmt& s, int first, const Row& r, const Batch& batch) {
  Bind(s, first, Statements()[static_cast<size_t>(r.kind)].params, r, batch);
}

Status StoreSink::Apply(const Batch& batch) {
  const auto& statements = Statements();
  const std::vector<Row>& rows = batch.rows;
  for (size_t i = 0; i < rows.size();) {
    const auto kind = static_cast<size_t>(rows[i].kind);
    size_t run = 1;
    if (multi_[kind].prepared())
      while (run < kMultiRows && i + run < rows.size() && rows[i + run].kind == rows[i].kind) ++run;
    sqlite::Stmt& s = run == kMultiRows ? multi_[kind] : single_[kind];
    if (run < kMultiRows) run = 1;
    const std::string_view params = statements[kind].params;
    for (size_t j = 0; j < run; ++j) Bind(s, 1 + static_cast<int>(j * params.size()), params, rows[i + j], batch);
    int rc = s.Run();
    if (rc != SQLITE_DONE) return Sql(rc);
    i += run;
  }
  return Status::Ok();
}

Status StoreSink::Commit() { return Exec("COMMIT; BEGIN"); }

Status StoreSink::Finish() {
  if (!open()) return Status::Ok();
  Status st = Exec("COMMIT");
  // Finalized: leaving WAL mode wants no statement pending.
  single_ = {};
  multi_ = {};
  if (st.ok()) st = Exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE");
  db_.Close();
  return st;
}

}  // namespace magneton::store
