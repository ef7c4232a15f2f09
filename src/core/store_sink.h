// The SQLite side of RunWriter: creates a run file and inserts queued rows
// (store_rows.h) with one prepared statement per row kind. Used by one thread
// at a time (the writer thread while recording, the caller before and after).
#pragma once

#include <array>
#include <string>

#include "core/sqlite_util.h"
#include "core/status.h"
#include "core/store_rows.h"

namespace magneton::store {

inline constexpr size_t kMultiRows = 32;

// Binds row `r` (its kind's StatementSpec::params) to `stmt` from parameter
// `first` (1-based); its texts and blobs are in `batch`.
void BindRow(sqlite::Stmt& stmt, int first, const Row& r, const Batch& batch);

class StoreSink {
 public:
  explicit StoreSink(std::string path) : path_(std::move(path)) {}

  // Creates the file (which must not exist), its schema and statements, and
  // opens the first transaction.
  Status Create();
  // Inserts the rows of `batch`, in order, into the open transaction.
  Status Apply(const Batch& batch);
  // Makes everything applied so far durable against a killed process.
  Status Commit();
  // Commits, then folds the write-ahead log into the file and closes it, so a
  // finished run is one self-contained file.
  Status Finish();
  bool open() const { return db_.get() != nullptr; }

 private:
  Error Sql(int rc) const { return sqlite::SqlError(path_, rc, db_.errmsg()); }
  Status Exec(const char* sql);

  std::string path_;
  sqlite::Db db_;
  static constexpr size_t kKinds = static_cast<size_t>(RowKind::kCount);
  std::array<sqlite::Stmt, kKinds> single_;
  // For plain inserts: one statement that inserts kMultiRows rows at once,
  // used for runs of rows of one kind (kernels arrive by the thousand).
  std::array<sqlite::Stmt, kKinds> multi_;
};

}  // namespace magneton::store
