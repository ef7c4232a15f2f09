// `magneton top`: where a run's energy went, grouped by kernel name, NVTX
// range name or operator name, like `nsys stats` or key_averages().table().
// Energy comes from energy::Attribute; without energy the rows are ordered by
// GPU time and the table says why energy is missing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/run.h"
#include "energy/attribution.h"

namespace magneton::report {

enum class TopBy { kKernel, kRange, kOp };

struct TopRow {
  std::string name;
  int64_t calls = 0;
  double joules = 0;      // NaN when the run has no energy
  double energy_pct = 0;  // of the run's GPU energy
  int64_t gpu_ns = 0;     // kernel time (for ranges and ops: of the kernels they launched)
  double gpu_pct = 0;     // of all kernel time
  int64_t wall_ns = 0;    // ranges and ops: summed duration; kernels: same as gpu_ns
  double avg_w = 0;       // joules over GPU seconds: power while its kernels ran; NaN without energy
};

struct TopTable {
  TopBy by = TopBy::kKernel;
  std::vector<TopRow> rows;     // all groups, largest first
  bool energy_available = false;
  std::string energy_note;      // why energy is missing, or how it was measured
  double run_joules = 0;        // GPU energy over the run (NaN without energy)
  int64_t run_gpu_ns = 0;       // all kernel time
  int64_t run_ns = 0;           // the run's duration
  bool fingerprinted = false;   // a recording pass: its operators' wall times include the fingerprinting
  // No kernels (a run on the CPU): operators and ranges by their wall time.
  bool by_wall() const { return run_gpu_ns == 0 && by != TopBy::kKernel; }
};

TopTable BuildTop(const Run& run, const energy::Attribution& attribution, TopBy by);
// At most `limit` rows (0: all), for a terminal.
std::string RenderTop(const TopTable& table, const std::string& title, size_t limit);
// The same rows as JSON (docs/tracing.md describes the fields).
nlohmann::json TopToJson(const TopTable& table, size_t limit);

const char* TopByName(TopBy by);

}  // namespace magneton::report
