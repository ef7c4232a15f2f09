#include "analysis/diff/rules.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace magneton::analysis {

struct CompiledPattern {
  std::regex re;
};

bool Pattern::Matches(const std::string& name) const { return std::regex_search(name, re->re); }

namespace {

using nlohmann::json;

Result<EvidenceClass> ParseEvidence(const std::string& s, const std::string& where) {
  for (auto e :
       {EvidenceClass::kOperators, EvidenceClass::kKernels, EvidenceClass::kLaunch, EvidenceClass::kArguments,
        EvidenceClass::kTimeline, EvidenceClass::kHost, EvidenceClass::kDispatch, EvidenceClass::kNone})
    if (s == ToString(e)) return e;
  return MakeError(
      ErrorCode::kInvalidArgument,
      fmt::format("{}: unknown evidence class '{}' (operators, kernels, launch, arguments, timeline, host, dispatch, none)", where, s));
}

Result<std::vector<Pattern>> ParsePatterns(const json& rule, const char* field, const std::string& where) {
  std::vector<Pattern> out;
  if (!rule.contains(field)) return out;
  const json& v = rule[field];
  if (!v.is_array())
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: '{}' must be a list of regular expressions", where, field));
  for (const auto& p : v) {
    if (!p.is_string())
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{}: '{}' holds a non-string pattern", where, field));
    try {
      out.push_back({p.get<std::string>(),
                     std::make_shared<const CompiledPattern>(CompiledPattern{std::regex(
                         p.get<std::string>(), std::regex::ECMAScript | std::regex::icase | std::regex::optimize)})});
    } catch (const std::regex_error& e) {
      return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: bad pattern '{}' in '{}': {}", where,
                                                                p.get<std::string>(), field, e.what()));
    }
  }
  return out;
}

bool AnyMatches(const Pattern& p, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return p.Matches(n); });
}

// Every pattern matches at least one name.
bool AllFound(const std::vector<Pattern>& patterns, const std::vector<std::string>& names) {
  return std::all_of(patterns.begin(), patterns.end(),
                     [&](const Pattern& p) { return AnyMatches(p, names); });
}

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
}

}  // namespace

Result<std::vector<Rule>> ParseRules(const std::string& json_text, const std::string& file) {
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: not valid JSON", file));
  if (!doc.is_object() || !doc.contains("rules") || !doc["rules"].is_array())
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{}: expected an object with a \"rules\" list", file));
  std::vector<Rule> rules;
  int index = 0;
  for (const auto& r : doc["rules"]) {
    std::string where = fmt::format("{} rule {}", file, index++);
    if (!r.is_object()) return MakeError(ErrorCode::kInvalidArgument, where + ": not an object");
    Rule rule;
    rule.file = file;
    for (auto [field, dest] : {std::pair{"id", &rule.id}, std::pair{"title", &rule.title},
                               std::pair{"recommendation", &rule.recommendation}}) {
      if (!r.contains(field) || !r[field].is_string() || r[field].get<std::string>().empty())
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("{}: missing string field '{}'", where, field));
      *dest = r[field].get<std::string>();
    }
    where = fmt::format("{} rule '{}'", file, rule.id);
    if (r.contains("lean_adds_nothing")) {
      if (!r["lean_adds_nothing"].is_boolean())
        return MakeError(ErrorCode::kInvalidArgument, where + ": 'lean_adds_nothing' must be true or false");
      rule.lean_adds_nothing = r["lean_adds_nothing"].get<bool>();
    }
    if (r.contains("evidence")) {
      if (!r["evidence"].is_array())
        return MakeError(ErrorCode::kInvalidArgument, where + ": 'evidence' must be a list");
      for (const auto& e : r["evidence"]) {
        auto ev = ParseEvidence(e.is_string() ? e.get<std::string>() : e.dump(), where);
        if (!ev) return ev.error();
        rule.evidence.push_back(*ev);
      }
    }
    for (auto [field, dest] :
         {std::pair{"ops", &rule.ops}, std::pair{"costly_ops", &rule.costly_ops},
          std::pair{"lean_ops", &rule.lean_ops}, std::pair{"costly_kernels", &rule.costly_kernels},
          std::pair{"lean_kernels", &rule.lean_kernels}, std::pair{"params", &rule.params},
          std::pair{"costly_params", &rule.costly_params}, std::pair{"costly_ops_only", &rule.costly_ops_only},
          std::pair{"config", &rule.config}}) {
      auto p = ParsePatterns(r, field, where);
      if (!p) return p.error();
      *dest = std::move(*p);
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

Result<std::vector<Rule>> LoadRulesDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return MakeError(ErrorCode::kNotFound, fmt::format("{}: rules directory not found", dir));
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<Rule> all;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) return MakeError(ErrorCode::kIo, fmt::format("{}: cannot read", f.string()));
    std::stringstream text;
    text << in.rdbuf();
    auto rules = ParseRules(text.str(), f.string());
    if (!rules) return rules.error();
    for (auto& r : *rules) all.push_back(std::move(r));
  }
  return all;
}

void RuleSubject::SetParams(const std::vector<ParamDelta>& deltas) {
  params.clear();
  costly_params.clear();
  for (const auto& d : deltas) {
    params.push_back(d.subject + " " + d.parameter);
    costly_params.push_back(d.subject + " " + d.parameter + "=" + (costly == 'a' ? d.value_a : d.value_b));
  }
}

std::vector<RuleMatch> MatchRules(const std::vector<Rule>& rules, const RuleSubject& s) {
  std::vector<RuleMatch> out;
  for (const auto& rule : rules) {
    if (!rule.evidence.empty() &&
        std::find(rule.evidence.begin(), rule.evidence.end(), s.evidence) == rule.evidence.end())
      continue;
    if (!AllFound(rule.ops, s.ops) || !AllFound(rule.costly_ops, s.costly_ops) ||
        !AllFound(rule.lean_ops, s.lean_ops) || !AllFound(rule.costly_kernels, s.costly_kernels) ||
        !AllFound(rule.lean_kernels, s.lean_kernels) || !AllFound(rule.params, s.params) ||
        !AllFound(rule.costly_params, s.costly_params))
      continue;
    if (rule.lean_adds_nothing && !s.lean_ops.empty()) continue;
    // The pattern explains the whole surplus, not one operator among others (a copy inside a
    // gradient clipping is no extra copy).
    if (!rule.costly_ops_only.empty() &&
        !std::all_of(s.costly_ops.begin(), s.costly_ops.end(), [&](const std::string& op) {
          return std::any_of(rule.costly_ops_only.begin(), rule.costly_ops_only.end(),
                             [&](const Pattern& p) { return p.Matches(op); });
        }))
      continue;
    RuleMatch m;
    for (const auto& d : s.config)
      for (const auto& p : rule.config)
        if (p.Matches(d.key)) {
          m.steering.push_back(d);
          break;
        }
    if (!rule.config.empty() && m.steering.empty()) continue;
    m.hit = {rule.id, rule.title, rule.recommendation};
    if (!m.steering.empty()) {
      const auto& d = m.steering.front();
      ReplaceAll(m.hit.recommendation, "{key}", d.key);
      ReplaceAll(m.hit.recommendation, "{costly_value}", s.costly == 'a' ? d.value_a : d.value_b);
      ReplaceAll(m.hit.recommendation, "{lean_value}", s.costly == 'a' ? d.value_b : d.value_a);
    }
    out.push_back(std::move(m));
  }
  return out;
}

void MatchTimelineRules(Finding& f, const std::vector<Rule>& rules) {
  RuleSubject subject;
  subject.evidence = EvidenceClass::kTimeline;
  subject.costly = f.costly;
  for (const auto& e : f.evidence) {
    if (e.kind != EvidenceClass::kTimeline) continue;
    subject.SetParams(e.params);
    for (auto& m : MatchRules(rules, subject))
      if (std::none_of(f.rules.begin(), f.rules.end(), [&](const RuleHit& h) { return h.id == m.hit.id; }))
        f.rules.push_back(std::move(m.hit));
  }
}

}  // namespace magneton::analysis
