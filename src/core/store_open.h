// Opening an existing run file: the checks every reader of a .mgt makes
// before trusting it (exists, is SQLite, not truncated, is a run, schema
// version readable, all tables present). Shared by LoadRun, ReadHeader and
// AppendReplays.
#pragma once

#include <string>

#include "core/run.h"
#include "core/sqlite_util.h"
#include "core/status.h"

namespace magneton::store {

struct OpenedStore {
  sqlite::Db db;
  int schema_major = 0, schema_minor = 0;
  bool complete = false;  // the writer reached Close
};

// Checks the bytes of `path` before SQLite sees them: exists, regular file,
// SQLite magic, and no shorter than its header says (a truncated copy).
Status CheckRunFile(const std::string& path);

// Opens a run file. Read-only opens never modify the file (SQLITE_OPEN_READONLY,
// and the checks above run on a plain read). `writable` opens it for
// AppendReplays and additionally refuses a different major version.
Result<OpenedStore> OpenStore(const std::string& path, bool writable);

// The run_info table as a RunInfo.
Result<RunInfo> ReadRunInfo(const sqlite::Db& db, const std::string& path);

// Prepares `sql` on a file being read: a failure means a table or column is
// missing or damaged, so it is reported as corruption of `path`.
Status PrepareForRead(const sqlite::Db& db, const std::string& path, sqlite::Stmt* stmt,
                      std::string_view sql);

// The Error for a failed step while reading `path`.
Error ReadError(const sqlite::Db& db, const std::string& path, int rc);

}  // namespace magneton::store
