// Known inefficiency patterns, kept as data (rules/*.json, docs/diff.md):
// which operators, kernels and configuration keys make up the pattern, and
// what to tell the user. Code only evaluates them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/diff/finding.h"
#include "core/status.h"

namespace magneton::analysis {

struct CompiledPattern;  // rules.cpp: <regex> stays out of every file that includes the diff

struct Pattern {
  std::string text;                         // as written in the rule file
  std::shared_ptr<const CompiledPattern> re;  // ECMAScript, case-insensitive, searched (not anchored)
  bool Matches(const std::string& name) const;
};

struct Rule {
  std::string id, title, recommendation;
  std::string file;                                   // the rules file it came from
  std::vector<EvidenceClass> evidence;                // classes it applies to; empty: any
  std::vector<Pattern> ops;                           // each must match an operator of the region
  std::vector<Pattern> costly_ops, lean_ops;          // each must match an operator only that side runs
  std::vector<Pattern> costly_ops_only;               // every operator only the costly side runs matches one
  std::vector<Pattern> costly_kernels, lean_kernels;  // ... a kernel only that side launches
  std::vector<Pattern> params;                        // each must match a differing "<subject> <parameter>"
  std::vector<Pattern> costly_params;                 // ... "<subject> <parameter>=<the costly side's value>"
  bool lean_adds_nothing = false;                     // the lean side runs no op the costly side lacks
  std::vector<Pattern> config;                        // configuration keys that steer this choice;
                                                      // given: one of them must differ between runs
};

// What a finding looks like to the rules.
struct RuleSubject {
  EvidenceClass evidence = EvidenceClass::kNone;
  std::vector<std::string> ops;                           // every worker op, both sides
  std::vector<std::string> costly_ops, lean_ops;          // ops one side runs more of
  std::vector<std::string> costly_kernels, lean_kernels;  // kernels one side launches more of
  std::vector<std::string> params;                        // "<subject> <parameter>" of each ParamDelta
  std::vector<std::string> costly_params;                 // "<subject> <parameter>=<costly side's value>"
  std::vector<ConfigDelta> config;                        // every differing key, values as a/b
  char costly = 'a';

  // params and costly_params from one evidence's parameter differences.
  void SetParams(const std::vector<ParamDelta>& deltas);
};

struct RuleMatch {
  RuleHit hit;
  std::vector<ConfigDelta> steering;  // differing keys named by the rule
};

// Parses one rules file: {"rules": [ {...}, ... ]} (docs/diff.md).
Result<std::vector<Rule>> ParseRules(const std::string& json_text, const std::string& file);
// Loads every *.json in a directory, in name order.
Result<std::vector<Rule>> LoadRulesDir(const std::string& dir);

// The rules that match, in rule order. {key}, {costly_value}, {lean_value}
// in a recommendation are filled from the first steering key.
std::vector<RuleMatch> MatchRules(const std::vector<Rule>& rules, const RuleSubject& subject);

// Adds to a finding the rules its timeline evidence matches (each rule once),
// for timeline evidence completed after root cause (kernel_regions.h, idle_time.h).
void MatchTimelineRules(Finding& f, const std::vector<Rule>& rules);

}  // namespace magneton::analysis
