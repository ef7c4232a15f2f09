#include "report/dist.h"

#include <fmt/core.h>

#include <cmath>

#include "report/format.h"

namespace magneton::report {
namespace {

nlohmann::json Num(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

std::string Header(const analysis::DistAnalysis& d) {
  return fmt::format("job {}  world size {}  backend {}  waits by {}{}\n", d.job.empty() ? "-" : d.job, d.world_size,
                     d.backend.empty() ? "-" : d.backend, d.method == "arrival" ? "arrival (one host's clock)" : "duration",
                     d.energy_measured ? "" : "  (energy unmeasured: times only)");
}

// The end of a long path, where the rank's file name is.
std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - (n - 3));
}

std::string CostText(double v, const std::string& unit) { return unit == "J" ? FormatJoules(v) : FormatSeconds(v); }

}  // namespace

std::string RenderRankTable(const analysis::DistAnalysis& d) {
  std::string out = Header(d);
  out += fmt::format("{:>5}  {:<28} {:>10} {:>10} {:>12} {:>14} {:>10} {:>7} {:>11}\n", "rank", "run", "time",
                     "energy", "collectives", "in collectives", "wait", "wait %", "wait energy");
  double total_j = 0, total_wait_j = 0;
  int64_t total_ns = 0, total_wait = 0;
  for (const auto& r : d.ranks) {
    out += fmt::format("{:>5}  {:<28} {:>10} {:>10} {:>12} {:>14} {:>10} {:>7} {:>11}\n", r.rank, Tail(r.path, 28),
                       FormatSeconds(r.run_ns / 1e9), FormatJoules(r.joules), r.collectives,
                       FormatSeconds(r.collective_ns / 1e9), FormatSeconds(r.wait_ns / 1e9),
                       FormatPct(r.run_ns > 0 ? 100.0 * r.wait_ns / r.run_ns : 0), FormatJoules(r.wait_joules));
    total_j += r.joules;
    total_wait_j += r.wait_joules;
    total_ns += r.run_ns;
    total_wait += r.wait_ns;
  }
  out += fmt::format("{:>5}  {:<28} {:>10} {:>10} {:>12} {:>14} {:>10} {:>7} {:>11}\n", "all", "", FormatSeconds(total_ns / 1e9),
                     FormatJoules(total_j), "", "", FormatSeconds(total_wait / 1e9),
                     FormatPct(total_ns > 0 ? 100.0 * total_wait / total_ns : 0), FormatJoules(total_wait_j));
  out += fmt::format("\n{} collective calls aligned across ranks; wait: from a rank's arrival in a collective until the "
                     "last rank arrived\n",
                     d.aligned_calls);
  for (const auto& n : d.notes) out += "note: " + n + "\n";
  return out;
}

nlohmann::json RankTableToJson(const analysis::DistAnalysis& d) {
  nlohmann::json j;
  j["job"] = d.job;
  j["world_size"] = d.world_size;
  j["backend"] = d.backend;
  j["wait_method"] = d.method;
  j["energy_measured"] = d.energy_measured;
  j["aligned_calls"] = d.aligned_calls;
  j["notes"] = d.notes;
  j["ranks"] = nlohmann::json::array();
  for (const auto& r : d.ranks)
    j["ranks"].push_back({{"rank", r.rank},
                          {"run", r.path},
                          {"device", r.device},
                          {"device_name", r.device_name},
                          {"seconds", r.run_ns / 1e9},
                          {"joules", Num(r.joules)},
                          {"collectives", r.collectives},
                          {"collective_seconds", r.collective_ns / 1e9},
                          {"wait_seconds", r.wait_ns / 1e9},
                          {"waited_calls", r.waited_calls},
                          {"wait_joules", Num(r.wait_joules)}});
  return j;
}

std::string RenderRankDiff(const analysis::DistDiff& d) {
  std::string out = "a: " + Header(d.a) + "b: " + Header(d.b);
  const std::string cost_name = d.unit == "J" ? "energy" : "time";
  out += fmt::format("\n{:>5} {:>12} {:>12} {:>8} {:>12} {:>12} {:>13}\n", "rank", cost_name + " a", cost_name + " b",
                     "change", "wait a", "wait b", "collectives");
  for (const auto& r : d.ranks)
    out += fmt::format("{:>5} {:>12} {:>12} {:>8} {:>12} {:>12} {:>13}\n", r.rank, CostText(r.cost_a, d.unit),
                       CostText(r.cost_b, d.unit), FormatPct(ChangePct(r.cost_a, r.cost_b), true),
                       CostText(r.wait_a, d.unit), CostText(r.wait_b, d.unit),
                       fmt::format("{} / {}", r.collectives_a, r.collectives_b));
  out += fmt::format("{:>5} {:>12} {:>12} {:>8} {:>12} {:>12}\n", "all", CostText(d.total_a, d.unit),
                     CostText(d.total_b, d.unit), FormatPct(ChangePct(d.total_a, d.total_b), true),
                     CostText(d.wait_a, d.unit), CostText(d.wait_b, d.unit));
  out += "\n";
  out += d.waste ? "finding (waste): " : "no waste above the threshold: ";
  out += d.finding + "\n";
  for (const auto& n : d.a.notes) out += "note (a): " + n + "\n";
  for (const auto& n : d.b.notes) out += "note (b): " + n + "\n";
  return out;
}

nlohmann::json RankDiffToJson(const analysis::DistDiff& d) {
  nlohmann::json j;
  j["unit"] = d.unit;
  j["a"] = RankTableToJson(d.a);
  j["b"] = RankTableToJson(d.b);
  j["ranks"] = nlohmann::json::array();
  for (const auto& r : d.ranks)
    j["ranks"].push_back({{"rank", r.rank},
                          {"cost_a", r.cost_a},
                          {"cost_b", r.cost_b},
                          {"wait_a", r.wait_a},
                          {"wait_b", r.wait_b},
                          {"collectives_a", r.collectives_a},
                          {"collectives_b", r.collectives_b}});
  j["total_a"] = d.total_a;
  j["total_b"] = d.total_b;
  j["wait_a"] = d.wait_a;
  j["wait_b"] = d.wait_b;
  j["waste"] = d.waste;
  j["costlier"] = d.costlier ? std::string(1, d.costlier) : std::string();
  j["saving"] = d.saving;
  j["saving_pct"] = d.saving_pct * 100;
  j["finding"] = d.finding;
  return j;
}

}  // namespace magneton::report
