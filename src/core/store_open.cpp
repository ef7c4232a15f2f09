#include "core/store_open.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <set>

#include <fmt/core.h>

#include "core/schema.h"
#include "core/store.h"

namespace magneton::store {
namespace {

Error Corrupt(const std::string& path, std::string_view what) {
  return MakeError(ErrorCode::kCorrupt, fmt::format("{}: corrupt run file ({})", path, what));
}

bool ParseInt(std::string_view s, int64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

Status CheckRunFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return MakeError(ErrorCode::kNotFound, fmt::format("{}: no such file", path));
    return MakeError(ErrorCode::kIo, fmt::format("{}: {}", path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode))
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: is a directory, not a run file", path));
  if (!S_ISREG(st.st_mode))
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: not a regular file", path));
  if (st.st_size == 0)
    return MakeError(ErrorCode::kCorrupt, fmt::format("{}: empty file, not a run file", path));

  // The 100-byte SQLite header: magic, page size, and the page count that
  // is valid when the change counter matches version-valid-for.
  unsigned char h[100] = {};
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return MakeError(ErrorCode::kIo, fmt::format("{}: {}", path, std::strerror(errno)));
  size_t got = std::fread(h, 1, sizeof h, f);
  std::fclose(f);
  static const char kMagic[] = "SQLite format 3";  // 16 bytes with its NUL
  if (got < 16 || std::memcmp(h, kMagic, 16) != 0) {
    if (got < 16 && std::memcmp(h, kMagic, got) == 0)
      return MakeError(ErrorCode::kCorrupt, fmt::format("{}: truncated run file ({} bytes)", path, got));
    return MakeError(ErrorCode::kCorrupt, fmt::format("{}: not a run file (not an SQLite database)", path));
  }
  if (got < sizeof h)
    return MakeError(ErrorCode::kCorrupt, fmt::format("{}: truncated run file ({} bytes)", path, got));
  uint64_t page_size = (uint32_t(h[16]) << 8) | h[17];
  if (page_size == 1) page_size = 65536;
  uint64_t pages = BigEndian32(h + 28);
  bool pages_valid = pages != 0 && std::memcmp(h + 24, h + 92, 4) == 0;
  // With a write-ahead log beside it (a writer that was killed), the log may
  // hold pages the main file lacks; SQLite reconciles the two itself.
  if (pages_valid && !Exists(path + "-wal") && uint64_t(st.st_size) < pages * page_size)
    return MakeError(ErrorCode::kCorrupt,
                     fmt::format("{}: truncated run file ({} of {} bytes)", path, st.st_size, pages * page_size));
  return Status::Ok();
}

Status PrepareForRead(const sqlite::Db& db, const std::string& path, sqlite::Stmt* stmt,
                      std::string_view sql) {
  int rc = stmt->Prepare(db, sql);
  if (rc != SQLITE_OK) return ReadError(db, path, rc);
  return Status::Ok();
}

Error ReadError(const sqlite::Db& db, const std::string& path, int rc) {
  // Plain SQLITE_ERROR while reading means a damaged schema or a missing
  // column: the file is not what a writer of this format produced.
  if ((rc & 0xff) == SQLITE_ERROR) return Corrupt(path, db.errmsg());
  return sqlite::SqlError(path, rc, db.errmsg());
}

Result<OpenedStore> OpenStore(const std::string& path, bool writable) {
  MAGNETON_RETURN_IF_ERROR(CheckRunFile(path));
  OpenedStore s;
  std::string msg;
  // NOMUTEX: the connection stays on this thread, and SQLite's per-call
  // mutex would otherwise cost a quarter of a load (one lock per column read).
  const int mode = writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  int rc = s.db.Open(path, mode | SQLITE_OPEN_NOMUTEX, &msg);
  if (rc != SQLITE_OK) return sqlite::SqlError(path, rc, msg);
  // The file may come from anywhere: refuse schema tricks (triggers, views
  // calling functions) and check cell sizes as pages are read.
  sqlite3_db_config(s.db.get(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(s.db.get(), SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  s.db.Exec("PRAGMA cell_size_check=ON");

  sqlite::Stmt q;
  MAGNETON_RETURN_IF_ERROR(PrepareForRead(s.db, path, &q, "SELECT type, name FROM sqlite_master"));
  std::set<std::string, std::less<>> tables;
  while ((rc = q.Step()) == SQLITE_ROW)
    if (q.Text(0) == "table") tables.emplace(q.Text(1));
  if (rc != SQLITE_DONE) return ReadError(s.db, path, rc);
  if (!tables.count("meta"))
    return MakeError(ErrorCode::kCorrupt, fmt::format("{}: not a run file (no magneton meta table)", path));

  MAGNETON_RETURN_IF_ERROR(PrepareForRead(s.db, path, &q, "SELECT key, value FROM meta"));
  std::string format;
  int64_t major = -1, minor = -1, complete = 0;
  while ((rc = q.Step()) == SQLITE_ROW) {
    auto key = q.Text(0), value = q.Text(1);
    if (key == schema::kMetaFormat) format = value;
    if (key == schema::kMetaMajor && !ParseInt(value, &major)) major = -2;
    if (key == schema::kMetaMinor && !ParseInt(value, &minor)) minor = -2;
    if (key == schema::kMetaComplete) ParseInt(value, &complete);
  }
  if (rc != SQLITE_DONE) return ReadError(s.db, path, rc);
  if (format != schema::kFormat)
    return MakeError(ErrorCode::kCorrupt, fmt::format("{}: not a run file (meta.format is '{}', expected '{}')",
                                                      path, format, schema::kFormat));
  if (major < 1 || minor < 0 || major > 1'000'000 || minor > 1'000'000)
    return Corrupt(path, "bad schema version in meta");
  if (major > kSchemaMajor || (writable && major != kSchemaMajor))
    return MakeError(ErrorCode::kUnsupported,
                     fmt::format("{}: schema version {}.{} is newer than this magneton reads ({}.{}); "
                                 "upgrade magneton",
                                 path, major, minor, kSchemaMajor, kSchemaMinor));
  for (auto t : schema::kTables)
    if (!tables.count(t)) return Corrupt(path, fmt::format("missing table '{}'", t));
  s.schema_major = static_cast<int>(major);
  s.schema_minor = static_cast<int>(minor);
  s.complete = complete == 1;
  return s;
}

Result<RunInfo> ReadRunInfo(const sqlite::Db& db, const std::string& path) {
  sqlite::Stmt q;
  MAGNETON_RETURN_IF_ERROR(PrepareForRead(db, path, &q, "SELECT key, value FROM run_info"));
  RunInfo info;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    auto key = q.Text(0);
    auto value = q.Text(1);
    if (key == "command") info.command = value;
    else if (key == "host") info.host = value;
    else if (key == "clock_domain") info.clock_domain = value;
    else if (key == "magneton_version") info.magneton_version = value;
    else if (key == "pid") ParseInt(value, &info.pid);
    else if (key == "start_ns") ParseInt(value, &info.start_ns);
    else if (key == "end_ns") ParseInt(value, &info.end_ns);
    else if (key.starts_with(schema::kExtraPrefix))
      info.extra.emplace(key.substr(schema::kExtraPrefix.size()), value);
  }
  if (rc != SQLITE_DONE) return ReadError(db, path, rc);
  return info;
}

}  // namespace magneton::store
