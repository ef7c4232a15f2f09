// Thin RAII wrappers over the SQLite C API, shared by the store's writer and
// reader. They return raw SQLite result codes; the store turns a failure into
// an Error that names the run file (SqlError).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include "core/status.h"

namespace magneton::sqlite {

// An open database connection; closes on destruction.
class Db {
 public:
  Db() = default;
  ~Db() { Close(); }
  Db(Db&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Opens with sqlite3_open_v2 flags. On failure *this stays closed and the
  // result code is returned; errmsg receives SQLite's text.
  int Open(const std::string& path, int flags, std::string* errmsg);
  void Close();
  // Runs one or more statements that return no rows we need.
  int Exec(const char* sql);
  sqlite3* get() const { return h_; }
  const char* errmsg() const { return h_ ? sqlite3_errmsg(h_) : "out of memory"; }

 private:
  sqlite3* h_ = nullptr;
};

// A prepared statement, reused across rows (bind, step, reset) because
// preparing per row would cost more than the insert itself.
class Stmt {
 public:
  Stmt() = default;
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(Stmt&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  int Prepare(const Db& db, std::string_view sql);
  bool prepared() const { return s_ != nullptr; }

  // Binding indexes are 1-based, as in SQLite.
  void Bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  void Bind(int i, int32_t v) { sqlite3_bind_int(s_, i, v); }
  void Bind(int i, double v) { sqlite3_bind_double(s_, i, v); }
  // The text must outlive the next Step (SQLITE_STATIC avoids a copy).
  void Bind(int i, std::string_view v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  }
  void BindBlob(int i, std::string_view v) {
    sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  }
  void BindNull(int i) { sqlite3_bind_null(s_, i); }

  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(s_); }
  // Runs a statement that returns no rows and resets it: SQLITE_DONE on success.
  int Run() {
    int rc = sqlite3_step(s_);
    sqlite3_reset(s_);
    return rc;
  }
  void Reset() { sqlite3_reset(s_); }

  // Column indexes are 0-based, as in SQLite.
  int64_t Int64(int c) const { return sqlite3_column_int64(s_, c); }
  double Double(int c) const { return sqlite3_column_double(s_, c); }
  bool IsNull(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::string_view Text(int c) const;
  std::string_view Blob(int c) const;

 private:
  sqlite3_stmt* s_ = nullptr;
};

// An Error for a failed SQLite call on `path`, classified by result code:
// not-a-database and corruption are kCorrupt, I/O and full disk kIo.
Error SqlError(const std::string& path, int rc, std::string_view detail);

}  // namespace magneton::sqlite
