#include "core/sqlite_util.h"

#include <fmt/core.h>

namespace magneton::sqlite {

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    Close();
    h_ = o.h_;
    o.h_ = nullptr;
  }
  return *this;
}

int Db::Open(const std::string& path, int flags, std::string* errmsg) {
  Close();
  int rc = sqlite3_open_v2(path.c_str(), &h_, flags, nullptr);
  if (rc != SQLITE_OK) {
    if (errmsg) *errmsg = h_ ? sqlite3_errmsg(h_) : sqlite3_errstr(rc);
    Close();
    return rc;
  }
  // Extended codes tell a short read from other I/O errors.
  sqlite3_extended_result_codes(h_, 1);
  return SQLITE_OK;
}

void Db::Close() {
  if (h_) {
    sqlite3_close_v2(h_);
    h_ = nullptr;
  }
}

int Db::Exec(const char* sql) { return sqlite3_exec(h_, sql, nullptr, nullptr, nullptr); }

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(s_);
    s_ = o.s_;
    o.s_ = nullptr;
  }
  return *this;
}

int Stmt::Prepare(const Db& db, std::string_view sql) {
  sqlite3_finalize(s_);
  s_ = nullptr;
  return sqlite3_prepare_v3(db.get(), sql.data(), static_cast<int>(sql.size()),
                            SQLITE_PREPARE_PERSISTENT, &s_, nullptr);
}

std::string_view Stmt::Text(int c) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
  if (!p) return {};
  return {p, static_cast<size_t>(sqlite3_column_bytes(s_, c))};
}

std::string_view Stmt::Blob(int c) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(s_, c));
  if (!p) return {};
  return {p, static_cast<size_t>(sqlite3_column_bytes(s_, c))};
}

Error SqlError(const std::string& path, int rc, std::string_view detail) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      return MakeError(ErrorCode::kCorrupt, fmt::format("{}: not a run file (not an SQLite database)", path));
    case SQLITE_CORRUPT:
      return MakeError(ErrorCode::kCorrupt, fmt::format("{}: corrupt run file ({})", path, detail));
    case SQLITE_FULL:
      return MakeError(ErrorCode::kIo, fmt::format("{}: disk full", path));
    case SQLITE_IOERR:
      // A read past the end of the file means pages are missing.
      if (rc == SQLITE_IOERR_SHORT_READ)
        return MakeError(ErrorCode::kCorrupt, fmt::format("{}: truncated run file", path));
      return MakeError(ErrorCode::kIo, fmt::format("{}: I/O error ({})", path, detail));
    case SQLITE_CANTOPEN:
      return MakeError(ErrorCode::kIo, fmt::format("{}: cannot open ({})", path, detail));
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return MakeError(ErrorCode::kIo, fmt::format("{}: not writable ({})", path, detail));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return MakeError(ErrorCode::kIo, fmt::format("{}: locked by another process ({})", path, detail));
    case SQLITE_NOMEM:
      return MakeError(ErrorCode::kInternal, fmt::format("{}: out of memory", path));
    default:
      return MakeError(ErrorCode::kInternal, fmt::format("{}: sqlite error ({})", path, detail));
  }
}

}  // namespace magneton::sqlite
