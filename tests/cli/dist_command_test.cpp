// `magneton top` and `magneton diff` over the rank files of a distributed job
// (docs/distributed.md), through the real binary, on tests/data/dist.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_magneton.h"

namespace magneton {
namespace {

using testing::RunMagneton;

std::string Fixture(const std::string& name) { return std::string(MAGNETON_TEST_DATA) + "/dist/" + name + ".mgt"; }

TEST(DistCommand, TopShowsOneRowPerRank) {
  auto r = RunMagneton({"top", Fixture("join.rank1"), Fixture("join.rank0")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* expected : {"world size 2", "backend gloo", "energy unmeasured", "wait energy", "join.rank0.mgt",
                               "join.rank1.mgt", "collective calls aligned"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
  EXPECT_LT(r.out.find("join.rank0.mgt"), r.out.find("join.rank1.mgt"));  // rows in rank order
}

TEST(DistCommand, TopJsonHasEveryRank) {
  auto r = RunMagneton({"top", Fixture("early_exit.rank0"), Fixture("early_exit.rank1"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["world_size"], 2);
  ASSERT_EQ(j["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"][1]["rank"], 1);
  EXPECT_TRUE(j["ranks"][1]["joules"].is_null());
  EXPECT_GT(j["ranks"][1]["collectives"].get<int>(), 0);
}

TEST(DistCommand, DiffOfRankSetsComparesRankByRank) {
  auto r = RunMagneton({"diff", Fixture("join.rank0") + "," + Fixture("join.rank1"),
                        Fixture("early_exit.rank0") + "," + Fixture("early_exit.rank1")});
  // 1 when one side spends >= 10% more, 0 otherwise; which side is timing noise on a CPU.
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* expected : {"a: job", "b: job", "time a", "wait b", "collectives", "57 / 33", "spends"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;

  auto j = RunMagneton({"diff", Fixture("join.rank0") + "," + Fixture("join.rank1"),
                        Fixture("early_exit.rank0") + "," + Fixture("early_exit.rank1"), "--json"});
  ASSERT_EQ(j.exit_code, r.exit_code) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["waste"].get<bool>(), r.exit_code == 1);
  EXPECT_EQ(doc["unit"], "s");
  EXPECT_EQ(doc["ranks"][1]["collectives_a"], 57);
  EXPECT_EQ(doc["ranks"][1]["collectives_b"], 33);
  EXPECT_EQ(doc["ranks"].size(), 2u);
}

TEST(DistCommand, MixedJobsAndMissingRanksAreOneLineExit2) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  std::vector<Case> cases = {
      {{"top", Fixture("join.rank0"), Fixture("early_exit.rank1")}, "files of different jobs"},
      {{"top", Fixture("join.rank0"), Fixture("join.rank0")}, "rank 0 is also"},
      {{"diff", Fixture("join.rank0") + "," + Fixture("join.rank0"), Fixture("early_exit.rank0") + "," +
                                                                          Fixture("early_exit.rank1")},
       "rank 0 is also"},
      {{"diff", Fixture("join.rank0") + "," + Fixture("join.rank1"), Fixture("early_exit.rank0")}, "one run file"},
      {{"diff", Fixture("join.rank0") + "," + Fixture("nope"),
        Fixture("early_exit.rank0") + "," + Fixture("early_exit.rank1")},
       "nope.mgt: no such file"},
  };
  for (const auto& c : cases) {
    auto r = RunMagneton(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.out << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // one line
  }
}

}  // namespace
}  // namespace magneton
