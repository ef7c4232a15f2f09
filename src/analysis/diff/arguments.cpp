#include "analysis/diff/arguments.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "analysis/diff/paired_ops.h"

namespace magneton::analysis {
namespace {

// How many differences the summary line names.
constexpr size_t kSummarized = 3;

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `s` at `pos` reads "name=".
bool StartsArgument(const std::string& s, size_t pos) {
  size_t i = pos;
  while (i < s.size() && IsNameChar(s[i])) ++i;
  return i > pos && i < s.size() && s[i] == '=';
}

// The copies (and memsets) issued by the region's ops, nested ones included,
// in the order the run recorded them.
std::vector<const Transfer*> CopiesOf(const RegionSide& s) {
  const RunIndex& index = s.cost->index();
  std::vector<int64_t> rows;
  for (auto op : index.Subtrees(*s.ops))
    for (auto t : index.transfers(op)) rows.push_back(t);
  std::sort(rows.begin(), rows.end());
  std::vector<const Transfer*> out;
  for (auto t : rows) out.push_back(&s.run->transfers[t]);
  return out;
}

std::string OrUnknown(const std::string& memory) { return memory.empty() ? "unrecorded" : memory; }

}  // namespace

std::vector<std::pair<std::string, std::string>> SplitArgs(const std::string& args) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t begin = 0;
  while (begin < args.size()) {
    size_t end = begin;
    for (size_t at = args.find(", ", begin); ; at = args.find(", ", at + 2)) {
      if (at == std::string::npos || StartsArgument(args, at + 2)) {
        end = at == std::string::npos ? args.size() : at;
        break;
      }
    }
    const std::string part = args.substr(begin, end - begin);
    const size_t eq = part.find('=');
    if (eq != std::string::npos) out.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    begin = end + 2;
  }
  return out;
}

std::vector<ParamDelta> ArgumentDeltas(const RegionSide& a, const std::vector<int64_t>& wa, const RegionSide& b,
                                       const std::vector<int64_t>& wb) {
  std::vector<ParamDelta> out;
  auto name = [](const Transfer* t) { return t->kind; };
  for (auto [x, y] : PairByName(CopiesOf(a), CopiesOf(b), name)) {
    const std::string subject = x->kind + " copy";
    AddDelta(out, subject, "source memory", OrUnknown(x->src_memory), OrUnknown(y->src_memory));
    AddDelta(out, subject, "destination memory", OrUnknown(x->dst_memory), OrUnknown(y->dst_memory));
    AddDelta(out, subject, "synchronous", x->synchronous ? "yes" : "no", y->synchronous ? "yes" : "no");
  }
  ForEachPairedInput(a, wa, b, wb, [&](const std::string& op, size_t i, const Tensor& x, const Tensor& y) {
    if (!x.memory.empty() && !y.memory.empty())
      AddDelta(out, fmt::format("{} input {}", op, i), "memory", x.memory, y.memory);
  });
  ForEachPairedOp(a, wa, b, wb, [&](const Op& x, const Op& y) {
    if (x.args == y.args) return;
    std::map<std::string, std::string> ya;
    for (auto& [k, v] : SplitArgs(y.args)) ya[k] = v;
    for (auto& [k, v] : SplitArgs(x.args)) {
      // An argument one side passed as None is left out of its record.
      auto it = ya.find(k);
      AddDelta(out, x.name, k, v, it == ya.end() ? "None" : it->second);
      if (it != ya.end()) ya.erase(it);
    }
    for (auto& [k, v] : ya) AddDelta(out, x.name, k, "None", v);
  });
  return out;
}

std::string ArgumentSummary(const std::vector<ParamDelta>& deltas) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < deltas.size() && i < kSummarized; ++i) {
    const auto& d = deltas[i];
    parts.push_back(fmt::format("{} {} {} on a, {} on b", d.subject, d.parameter, d.value_a, d.value_b));
  }
  if (deltas.size() > kSummarized) parts.push_back(fmt::format("{} more", deltas.size() - kSummarized));
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace magneton::analysis
