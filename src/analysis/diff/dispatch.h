// Eager against compiled (docs/diff.md, "Eager against compiled"): the same
// program run one operator at a time on one side and as compiled calls on the
// other (JAX without and with jax.jit, PyTorch eager and torch.compile). Each
// eager operator is a call from Python into the framework: the host's
// dispatch work between the operators (and, on a device, the idle gaps while
// the next launch comes) is what compiling removes, together with the
// kernels it fuses. The regions inside a compiled call are costed by shares
// of it (a CPU-only JAX run) or miss its fused work (a torch.compile run), so
// the comparison that holds is the iteration's: one run-level finding of
// class `dispatch`, into which the region groups that differ only by being
// compiled on one side are folded.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/diff/diff.h"
#include "analysis/diff/finding.h"
#include "analysis/diff/region_cost.h"
#include "analysis/diff/root_cause.h"
#include "analysis/match/region_match.h"
#include "core/run.h"

namespace magneton::analysis {

// An op that runs its children as one compiled call: a jit equation of JAX,
// a torch.compile region.
bool IsCompiledScope(const std::string& op_name);

// The top-level ops holding a region side's ops: each is one call from the
// program into the framework (a dispatch). Names, sorted.
std::vector<std::string> DispatchUnits(const RegionSide& s);

// The outermost compiled scope holding any of a region side's ops ("" when
// none: the side runs eagerly).
std::string CompiledScope(const RegionSide& s);

// The compiled scope whose measured time a region side's times are shares of
// ("" when they are measured): JAX equations inside a jit call on a run with
// no kernel trace take their times from the call's in proportion to their
// eager times (docs/jax.md), so such a region's cost is an estimate.
std::string EstimatedScope(const RegionSide& s);

// One run's dispatching, per iteration.
struct DispatchUse {
  double iteration_s = 0;             // the iteration's time
  double program_s = kUnmeasured;     // per call as the program runs (untraced steps: untraced.h)
  double program_j = kUnmeasured;     // ... and its energy
  double cost = 0;                    // the iteration's cost in the report's unit
  std::vector<double> instances;      // per repetition of a measured pass (else one)
  double calls = 0;                   // top-level ops: calls into the framework
  double ops = 0;                     // ops that do work (not metadata), nested ones included
  double kernels = -1;                // kernels launched (-1: none recorded)
  double between_s = 0;               // host: outside the top-level ops; device: idle inside the iteration
  bool on_device = false;             // between_s is the device's idle time
  std::set<std::string> frameworks;   // of the run's ops
  std::vector<char> region_compiled;  // by matched region: inside a compiled scope
  std::set<std::string> compiled;     // the compiled scopes holding matched regions
};

// `run` is the recorded run, `cost` its cost model, `side_a` which side of
// the match it is, `summary` its RunSummary in the report.
DispatchUse MeasureDispatch(const Run& run, const CostModel& cost, const MatchResult& match, bool side_a,
                            const RunSummary& summary, bool energy);

// Whether the pair is eager against compiled: both runs come from the same
// frameworks, and some matched regions run inside compiled scopes on one side
// and eagerly on the other, none the other way round. The compiled side, or 0.
char CompiledSide(const DispatchUse& a, const DispatchUse& b);

// The run-level finding of an eager-against-compiled pair: the iterations'
// costs with the calls, kernels and time between operators of each side as
// evidence, judged like a region group (waste when the eager side costs the
// threshold more, is not faster and the outputs agree). nullopt when the pair
// is not eager against compiled.
std::optional<Finding> DispatchFinding(const DispatchUse& a, const DispatchUse& b, const DiffReport& report,
                                       const DiffOptions& options);

}  // namespace magneton::analysis
