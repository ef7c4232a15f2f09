// Bad run files: every failure is an Error naming the file and the problem,
// and a failed load leaves the file exactly as it was.
#include <sqlite3.h>

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "core/fingerprint_codec.h"
#include "core/store.h"
#include "sample_run.h"
#include "test_files.h"

namespace magneton {
namespace {

using testing::ReadBytes;
using testing::TempDir;
using testing::WriteBytes;

// Edits a run file behind the store's back, as a damaged or foreign file would be.
void ExecSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

class BadRunFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ / "run.mgt";
    ASSERT_TRUE(SaveRun(testing::MakeSampleRun(20, 400), path_).ok());
  }
  // Loads `path_`, expects failure with `code` and a message that names the
  // file and contains `problem`; the file's bytes must not change.
  void ExpectLoadFails(ErrorCode code, const std::string& problem) {
    std::string before = ReadBytes(path_);
    auto run = LoadRun(path_);
    ASSERT_FALSE(run.ok());
    EXPECT_EQ(run.error().code, code) << run.error().message;
    EXPECT_EQ(run.error().message.rfind(path_ + ": ", 0), 0u) << run.error().message;
    EXPECT_NE(run.error().message.find(problem), std::string::npos) << run.error().message;
    EXPECT_EQ(run.error().message.find('\n'), std::string::npos);
    EXPECT_EQ(ReadBytes(path_), before) << "a failed load modified the file";
  }
  TempDir dir_;
  std::string path_;
};

TEST_F(BadRunFile, MissingFile) {
  path_ = dir_ / "absent.mgt";
  auto run = LoadRun(path_);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(run.error().message, path_ + ": no such file");
  EXPECT_FALSE(std::filesystem::exists(path_));  // opening did not create it
}

TEST_F(BadRunFile, TextFileIsNotARunFile) {
  WriteBytes(path_, "step,joules\n1,2.5\n2,2.75\n" + std::string(200, 'x'));
  ExpectLoadFails(ErrorCode::kCorrupt, "not a run file");
}

TEST_F(BadRunFile, EmptyFile) {
  WriteBytes(path_, "");
  ExpectLoadFails(ErrorCode::kCorrupt, "empty file");
}

TEST_F(BadRunFile, OtherSqliteDatabaseIsNotARunFile) {
  std::filesystem::remove(path_);
  ExecSql(path_, "CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES('hello');");
  ExpectLoadFails(ErrorCode::kCorrupt, "not a run file");
}

TEST_F(BadRunFile, WrongFormatInMeta) {
  ExecSql(path_, "UPDATE meta SET value = 'something-else' WHERE key = 'format'");
  ExpectLoadFails(ErrorCode::kCorrupt, "not a run file");
}

TEST_F(BadRunFile, TruncatedToHalf) {
  std::string bytes = ReadBytes(path_);
  ASSERT_GT(bytes.size(), 8u * 4096);  // many pages, so half of them go missing
  WriteBytes(path_, bytes.substr(0, bytes.size() / 2));
  ExpectLoadFails(ErrorCode::kCorrupt, "truncated");
}

TEST_F(BadRunFile, TruncatedInsideTheHeader) {
  WriteBytes(path_, ReadBytes(path_).substr(0, 40));
  ExpectLoadFails(ErrorCode::kCorrupt, "truncated");
}

TEST_F(BadRunFile, GarbageOverDataPages) {
  std::string bytes = ReadBytes(path_);
  // Keep page 1 (header and schema); scribble over every later page.
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131) ^ 0x5a);
  WriteBytes(path_, bytes);
  ExpectLoadFails(ErrorCode::kCorrupt, "corrupt run file");
}

TEST_F(BadRunFile, NewerMajorSchemaIsRefused) {
  ExecSql(path_, "UPDATE meta SET value = '99' WHERE key = 'schema_major'");
  ExpectLoadFails(ErrorCode::kUnsupported, fmt::format("schema version 99.{1} is newer than this magneton reads ({0}.{1})",
                                                       kSchemaMajor, kSchemaMinor));
  auto h = ReadHeader(path_);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, ErrorCode::kUnsupported);
  EXPECT_FALSE(AppendReplays(path_, {}).ok());
}

TEST_F(BadRunFile, NewerMinorSchemaLoads) {
  // Minor versions only add: extra tables and columns are ignored.
  ExecSql(path_,
          "UPDATE meta SET value = '7' WHERE key = 'schema_minor';"
          "CREATE TABLE future_table(x); ALTER TABLE kernels ADD COLUMN future_column INTEGER;");
  auto run = LoadRun(path_);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->kernels.size(), 400u);
  auto h = ReadHeader(path_);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->schema_minor, 7);
}

TEST_F(BadRunFile, SchemaOneZeroHasOneCallPerApiRow) {
  // 1.0 files have no api_calls.count (docs/run-format.md, "Versioning").
  ExecSql(path_, "UPDATE meta SET value = '0' WHERE key = 'schema_minor'; DROP VIEW api_calls_named;"
                 "ALTER TABLE api_calls DROP COLUMN count;");
  auto run = LoadRun(path_);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->api_calls.size(), 3u);
  for (const auto& a : run->api_calls) EXPECT_EQ(a.count, 1) << a.name;
}

TEST_F(BadRunFile, SchemaOneOneHasNoArgumentsOrMemoryKinds) {
  ExecSql(path_, "UPDATE meta SET value = '1' WHERE key = 'schema_minor'; DROP VIEW ops_named;"
                 "ALTER TABLE ops DROP COLUMN args; ALTER TABLE tensors DROP COLUMN memory;"
                 "ALTER TABLE transfers DROP COLUMN src_memory; ALTER TABLE transfers DROP COLUMN dst_memory;"
                 "ALTER TABLE transfers DROP COLUMN synchronous;");
  auto run = LoadRun(path_);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_FALSE(run->ops.empty());
  for (const auto& o : run->ops) EXPECT_EQ(o.args, "");
  for (const auto& t : run->tensors) EXPECT_EQ(t.memory, "");
  for (const auto& t : run->transfers) EXPECT_FALSE(t.synchronous || !t.src_memory.empty() || !t.dst_memory.empty());
}

TEST_F(BadRunFile, SchemaOneTwoNeedsItsColumns) {
  ExecSql(path_, "ALTER TABLE transfers DROP COLUMN synchronous");
  ExpectLoadFails(ErrorCode::kCorrupt, "synchronous");
}

TEST_F(BadRunFile, ApiRowStandingForNoCall) {
  ExecSql(path_, "UPDATE api_calls SET count = 0 WHERE id = 2");
  ExpectLoadFails(ErrorCode::kCorrupt, "api call 2 stands for 0 calls");
}

TEST_F(BadRunFile, MissingTable) {
  ExecSql(path_, "DROP VIEW kernels_named; DROP TABLE kernels");
  ExpectLoadFails(ErrorCode::kCorrupt, "missing table 'kernels'");
}

TEST_F(BadRunFile, ViewInPlaceOfTable) {
  ExecSql(path_, "DROP VIEW kernels_named; DROP TABLE kernels; CREATE VIEW kernels AS SELECT * FROM ops");
  ExpectLoadFails(ErrorCode::kCorrupt, "missing table 'kernels'");
}

TEST_F(BadRunFile, MissingColumn) {
  ExecSql(path_, "ALTER TABLE kernels DROP COLUMN registers");
  ExpectLoadFails(ErrorCode::kCorrupt, "registers");
}

TEST_F(BadRunFile, IdsNotDense) {
  ExecSql(path_, "UPDATE kernels SET id = 1000 WHERE id = 7");
  ExpectLoadFails(ErrorCode::kCorrupt, "kernels id 8 at row 7; ids must be dense");
}

TEST_F(BadRunFile, MissingString) {
  ExecSql(path_, "UPDATE kernels SET name = 123456 WHERE id = 3");
  ExpectLoadFails(ErrorCode::kCorrupt, "kernels names string 123456");
}

TEST_F(BadRunFile, EdgeOfMissingOp) {
  ExecSql(path_, "INSERT INTO op_io VALUES(5000, 0, 0, 0)");
  ExpectLoadFails(ErrorCode::kCorrupt, "op_io row for missing op 5000");
}

TEST_F(BadRunFile, BadFingerprintBlob) {
  ExecSql(path_, "UPDATE tensors SET fingerprint = x'01020304' WHERE id = 0");
  ExpectLoadFails(ErrorCode::kCorrupt, "tensor 0: bad fingerprint");
}

TEST_F(BadRunFile, MalformedShape) {
  ExecSql(path_, "UPDATE tensors SET shape = '8,,x' WHERE id = 1");
  ExpectLoadFails(ErrorCode::kCorrupt, "tensor 1 has a malformed shape");
}

TEST_F(BadRunFile, DanglingReferencesBecomeNoneAndAreCounted) {
  ExecSql(path_, "UPDATE kernels SET op = 999 WHERE id = 2; UPDATE op_io SET tensor = 777 WHERE rowid = 1");
  auto run = LoadRun(path_);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->kernels[2].op, kNone);
  EXPECT_EQ(run->ops[0].inputs[0], kNone);
  ASSERT_FALSE(run->stats.empty());
  EXPECT_EQ(run->stats.back().name, "store.dangling_references");
  EXPECT_EQ(run->stats.back().value, 2);
  EXPECT_EQ(run->stats.back().severity, "data_loss");
}

TEST_F(BadRunFile, DirectoryIsNotARunFile) {
  path_ = dir_.path();
  auto run = LoadRun(path_);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().message, path_ + ": is a directory, not a run file");
}

}  // namespace
}  // namespace magneton
