// The stats registry (stats_registry.h) is the whole list of stats a run can
// carry: what the committed recordings hold and what the Python side writes
// must be in it, with the same severity, and no C++ source spells a stat.
#include "core/stats_registry.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

#include "core/replay_status.h"
#include "core/store.h"

namespace magneton {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceRoot = fs::path(MAGNETON_TEST_DATA).parent_path().parent_path();

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Files under `dir` whose name ends in one of `extensions`.
std::vector<fs::path> FilesUnder(const fs::path& dir, const std::set<std::string>& extensions) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && extensions.count(e.path().extension().string())) out.push_back(e.path());
  return out;
}

void ExpectRegistered(const std::string& name, const std::string& severity, const std::string& where) {
  const StatDef* def = FindStat(name);
  ASSERT_NE(def, nullptr) << where << ": stat '" << name << "' is not in core/stats_registry.h";
  EXPECT_EQ(SeverityName(def->severity), severity) << where << ": " << name;
}

TEST(StatsRegistry, EntriesAreDistinctAndDescribed) {
  std::set<std::string_view> names;
  for (const StatDef* def : AllStats()) {
    EXPECT_TRUE(names.insert(def->name).second) << def->name;
    EXPECT_FALSE(def->description.empty()) << def->name;
    EXPECT_EQ(FindStat(def->name), def);
  }
  EXPECT_EQ(FindStat("no_such_stat"), nullptr);
}

TEST(StatsRegistry, MakeStatWritesTheEntry) {
  Stat s = MakeStat(stats::kCuptiRecordsDropped, 7);
  EXPECT_EQ(s.name, "cupti_records_dropped");
  EXPECT_EQ(s.severity, "data_loss");
  EXPECT_EQ(s.value, 7);
  EXPECT_EQ(s.description, stats::kCuptiRecordsDropped.description);
  EXPECT_EQ(MakeStat(stats::kCuptiUnavailable, 1, "why").description, "why");
  EXPECT_EQ(MakeStat(stats::kCuptiUnavailable, 1).severity, "error");
  EXPECT_TRUE(Is(s, stats::kCuptiRecordsDropped));
  EXPECT_FALSE(Is(s, stats::kCuptiBuffersRefused));

  std::vector<Stat> counted;
  AddCount(&counted, stats::kRecorderKernels, 0);
  EXPECT_TRUE(counted.empty());
  AddCount(&counted, stats::kRecorderKernels, 3);
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_EQ(counted[0].severity, "info");
}

TEST(StatsRegistry, EveryStatOfTheCommittedRecordingsIsRegistered) {
  int runs = 0;
  for (const fs::path& p : FilesUnder(MAGNETON_TEST_DATA, {".mgt"})) {
    Result<magneton::Run> run = LoadRun(p.string());
    if (!run.ok()) continue;  // the store tests keep broken files on purpose
    ++runs;
    for (const Stat& s : run->stats) ExpectRegistered(s.name, s.severity, p.string());
  }
  EXPECT_GT(runs, 10);
}

TEST(StatsRegistry, EveryStatThePythonSideWritesIsRegistered) {
  // g.add_stat("name", "severity", ...) and {"name": "x", "severity": "y", ...}
  const std::regex add_stat(R"re(add_stat\(\s*"([a-z_.]+)",\s*"([a-z_]+)")re");
  const std::regex literal(R"re("name":\s*"([a-z_.]+)",\s*"severity":\s*"([a-z_]+)")re");
  int found = 0;
  for (const fs::path& p : FilesUnder(kSourceRoot / "python" / "magneton", {".py"})) {
    const std::string text = ReadAll(p);
    for (const std::regex* re : {&add_stat, &literal})
      for (std::sregex_iterator m(text.begin(), text.end(), *re), end; m != end; ++m, ++found)
        ExpectRegistered((*m)[1], (*m)[2], p.string());
  }
  EXPECT_GT(found, 5);
}

TEST(StatsRegistry, NoCppSourceSpellsAStat) {
  const std::regex spelt(R"re(Stat\{\s*")re");
  for (const fs::path& p : FilesUnder(kSourceRoot / "src", {".cpp", ".h"}))
    EXPECT_FALSE(std::regex_search(ReadAll(p), spelt)) << p << ": name the stat from core/stats_registry.h";
}

TEST(ReplayStatus, NamesRoundTrip) {
  for (ReplayStatus s : {ReplayStatus::kOk, ReplayStatus::kHost, ReplayStatus::kBudget, ReplayStatus::kNoisy,
                         ReplayStatus::kMismatch, ReplayStatus::kUnsupported, ReplayStatus::kError})
    EXPECT_EQ(ParseReplayStatus(ReplayStatusName(s)), s);
  EXPECT_EQ(ReplayStatusName(ReplayStatus::kNoisy), "noisy");
  EXPECT_EQ(ParseReplayStatus("fine"), std::nullopt);
}

}  // namespace
}  // namespace magneton
