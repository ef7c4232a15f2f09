// `magneton info` and bad input, through the real binary.
#include <sqlite3.h>

#include <filesystem>
#include <set>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../core/sample_run.h"
#include "core/store.h"
#include "run_magneton.h"

namespace magneton {
namespace {

using testing::ReadBytes;
using testing::RunMagneton;
using testing::TempDir;
using testing::WriteBytes;

std::string SampleRunFile(const TempDir& dir) {
  std::string path = dir / "sample.mgt";
  EXPECT_TRUE(SaveRun(testing::MakeSampleRun(), path).ok());
  return path;
}

TEST(InfoCommand, DescribesTheRun) {
  TempDir dir;
  const std::string path = SampleRunFile(dir);
  auto r = RunMagneton({"info", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find(fmt::format("schema    {}.{} (written by magneton 0.1.0)", kSchemaMajor, kSchemaMinor)),
            std::string::npos)
      << r.out;
  for (const char* expected :
       {"command   python train_step.py --batch 8", "host      sample-host  pid 4242", "clock     CLOCK_MONOTONIC",
        "duration  2.50 s", "framework = torch 2.11.0",
        "Sample GPU", "GPU-0000-sample", "80 GiB",
        // every table is counted
        "  kernels            12", "  ops                 6   19 dataflow edges", "10 with fingerprints",
        "  series              3   54 samples", "  replays             2", "  config              2",
        // 26 counter readings, 30 J apart
        "750 J  over 2.50 s   energy.total last - first, nvml",
        "data_loss  cupti_records_dropped         3   activity buffer overflowed"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << "missing '" << expected << "' in\n" << r.out;
}

TEST(InfoCommand, JsonHasCountsEnergyAndStats) {
  TempDir dir;
  auto r = RunMagneton({"info", SampleRunFile(dir), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"]["major"], kSchemaMajor);
  EXPECT_EQ(j["info"]["pid"], 4242);
  EXPECT_DOUBLE_EQ(j["info"]["duration_s"].get<double>(), 2.5);
  EXPECT_EQ(j["counts"]["kernels"], 12);
  EXPECT_EQ(j["counts"]["tensors"], 14);
  EXPECT_EQ(j["devices"].size(), 2u);
  ASSERT_EQ(j["energy"].size(), 1u);
  EXPECT_EQ(j["energy"][0]["device"], 1);
  EXPECT_DOUBLE_EQ(j["energy"][0]["joules"].get<double>(), 750.0);
  ASSERT_EQ(j["stats"].size(), 2u);
  EXPECT_EQ(j["stats"][0]["severity"], "data_loss");
}

TEST(InfoCommand, IntegratesPowerWhenThereIsNoCounter) {
  TempDir dir;
  magneton::Run run = testing::MakeSampleRun();
  run.series.erase(run.series.begin());  // drop energy.total; power.instant remains
  for (size_t i = 0; i < run.series.size(); ++i) run.series[i].id = static_cast<int64_t>(i);
  for (auto& v : run.series[0].value) v = 200.0;  // constant 200 W over 2.5 s
  ASSERT_TRUE(SaveRun(run, dir / "power.mgt").ok());
  auto r = RunMagneton({"info", dir / "power.mgt", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["energy"].size(), 1u);
  EXPECT_NEAR(j["energy"][0]["joules"].get<double>(), 500.0, 1e-6);
  EXPECT_NE(j["energy"][0]["method"].get<std::string>().find("power.instant"), std::string::npos);
}

TEST(InfoCommand, RunWithoutEnergySaysSo) {
  TempDir dir;
  magneton::Run run = testing::MakeSampleRun();
  run.series.clear();
  ASSERT_TRUE(SaveRun(run, dir / "quiet.mgt").ok());
  auto r = RunMagneton({"info", dir / "quiet.mgt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("none recorded"), std::string::npos) << r.out;
}

std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// One line "magneton: <file>: <problem>" on stderr, exit 2, nothing on stdout,
// and nothing written: the file and its directory are unchanged.
void ExpectBadInput(const std::string& path, const std::string& problem) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const auto before = Listing(dir);
  const std::string bytes = std::filesystem::is_regular_file(path) ? ReadBytes(path) : "";
  for (bool json : {false, true}) {
    auto r = json ? RunMagneton({"info", path, "--json"}) : RunMagneton({"info", path});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("magneton: " + path + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(problem), std::string::npos) << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  }
  EXPECT_EQ(Listing(dir), before);
  if (!bytes.empty()) {
    EXPECT_EQ(ReadBytes(path), bytes);
  }
}

TEST(InfoCommand, MissingFile) {
  TempDir dir;
  ExpectBadInput(dir / "absent.mgt", "no such file");
}

TEST(InfoCommand, NotARunFile) {
  TempDir dir;
  WriteBytes(dir / "notes.txt", "these are not the joules you are looking for\n");
  ExpectBadInput(dir / "notes.txt", "not a run file");
}

TEST(InfoCommand, EmptyFile) {
  TempDir dir;
  WriteBytes(dir / "empty.mgt", "");
  ExpectBadInput(dir / "empty.mgt", "empty file");
}

TEST(InfoCommand, TruncatedFile) {
  TempDir dir;
  std::string bytes = ReadBytes(SampleRunFile(dir));
  WriteBytes(dir / "cut.mgt", bytes.substr(0, bytes.size() * 2 / 3));
  ExpectBadInput(dir / "cut.mgt", "truncated");
}

TEST(InfoCommand, CorruptFile) {
  TempDir dir;
  std::string bytes = ReadBytes(SampleRunFile(dir));
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  WriteBytes(dir / "bad.mgt", bytes);
  ExpectBadInput(dir / "bad.mgt", "corrupt run file");
}

TEST(InfoCommand, NewerSchema) {
  TempDir dir;
  const std::string path = SampleRunFile(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_major'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  ExpectBadInput(path, fmt::format("schema version 99.{1} is newer than this magneton reads ({0}.{1})", kSchemaMajor,
                                   kSchemaMinor));
}

TEST(InfoCommand, Directory) {
  TempDir dir;
  std::filesystem::create_directory(dir / "runs");
  ExpectBadInput(dir / "runs", "is a directory");
}

TEST(Usage, MistakesAreOneLineAndExitTwo) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {}, {"info"}, {"info", "--bogus", "x.mgt"}, {"no-such-command"}, {"info", "a.mgt", "b.mgt"}}) {
    auto r = RunMagneton(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("magneton: ", 0), 0u) << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  }
}

TEST(Usage, VersionAndHelp) {
  auto v = RunMagneton({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out, "magneton " MAGNETON_VERSION "\n");
  auto h = RunMagneton({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("info"), std::string::npos);
  auto ih = RunMagneton({"info", "--help"});
  EXPECT_EQ(ih.exit_code, 0);
  EXPECT_NE(ih.out.find("--json"), std::string::npos);
}

}  // namespace
}  // namespace magneton
