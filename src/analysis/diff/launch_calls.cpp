#include "analysis/diff/launch_calls.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <regex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace magneton::analysis {
namespace {

std::string Unversioned(const std::string& name) {
  static const std::regex version("_v[0-9]+$");
  return std::regex_replace(name, version, "");
}

std::string Phrase(const std::map<std::string, int64_t>& calls) {
  std::vector<std::string> parts;
  for (const auto& [name, n] : calls) parts.push_back(fmt::format("{} x{}", name, n));
  return parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, " + "));
}

std::vector<NamedCount> Counts(const std::map<std::string, int64_t>& calls) {
  std::vector<NamedCount> out;
  for (const auto& [name, n] : calls) out.push_back({name, n, 0, {}});
  return out;
}

}  // namespace

std::map<std::string, int64_t> LaunchCalls(const Run& run) {
  std::unordered_map<int64_t, const std::string*> launch;  // correlation -> call name
  for (const auto& c : run.api_calls)
    if (c.name.find("Launch") != std::string::npos) launch.emplace(c.correlation, &c.name);
  std::unordered_set<int64_t> seen;
  std::map<std::string, int64_t> out;
  for (const auto& k : run.kernels) {
    if (k.op == kRecorderWork || !seen.insert(k.correlation).second) continue;
    if (auto it = launch.find(k.correlation); it != launch.end()) ++out[Unversioned(*it->second)];
  }
  return out;
}

std::optional<Evidence> LaunchCallEvidence(const Run& a, const Run& b) {
  const auto ca = LaunchCalls(a), cb = LaunchCalls(b);
  if (ca.empty() || cb.empty()) return std::nullopt;
  auto graph = [](const std::map<std::string, int64_t>& c) {
    for (const auto& [name, n] : c)
      if (name.find("Graph") != std::string::npos) return true;
    return false;
  };
  if (graph(ca) == graph(cb)) return std::nullopt;  // the same kind of launch: no cause told here
  Evidence e;
  e.kind = EvidenceClass::kTimeline;
  e.summary = fmt::format(
      "the recording passes launch the program's kernels with {} on a and {} on b: {} replays a captured CUDA "
      "graph (one launch for many kernels, back to back on the device), {} launches them one by one from the host",
      Phrase(ca), Phrase(cb), graph(ca) ? 'a' : 'b', graph(ca) ? 'b' : 'a');
  e.all_a = Counts(ca);
  e.all_b = Counts(cb);
  return e;
}

}  // namespace magneton::analysis
