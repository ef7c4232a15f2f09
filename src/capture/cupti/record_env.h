// How `magneton record` talks to the injection library in the child process:
// environment variables, set by the CLI, read once at CUDA initialization.
// Header only, so the CLI can share the names without linking capture code.
#pragma once

#include <string_view>

namespace magneton::capture::env {

inline constexpr const char* kOutput = "MAGNETON_RECORD_OUTPUT";            // base path; files are <base>.<pid>.mgt
inline constexpr const char* kCommand = "MAGNETON_RECORD_COMMAND";          // the command line, for RunInfo
inline constexpr const char* kStacks = "MAGNETON_RECORD_STACKS";            // "1": native stacks at launches
inline constexpr const char* kApi = "MAGNETON_RECORD_API";                 // "launches" (default), "waits", "all", "none"
inline constexpr const char* kOnlyRanges = "MAGNETON_RECORD_ONLY_RANGES";   // NVTX range name prefix
inline constexpr const char* kDelay = "MAGNETON_RECORD_DELAY_S";            // seconds before recording starts
inline constexpr const char* kDuration = "MAGNETON_RECORD_DURATION_S";      // seconds of recording
inline constexpr const char* kStartPaused = "MAGNETON_RECORD_START_PAUSED"; // "1": wait for magneton.start()
inline constexpr const char* kEnergy = "MAGNETON_RECORD_ENERGY";            // samplers: "all" (default), "none", or nvml,rapl,procfs
inline constexpr const char* kNvtx = "MAGNETON_RECORD_NVTX";                // "0": no NVTX ranges
inline constexpr const char* kDump = "MAGNETON_CUPTI_DUMP";                 // directory for raw activity dumps
inline constexpr const char* kDumpMaxMb = "MAGNETON_CUPTI_DUMP_MAX_MB";     // dump size cap (default 8)
inline constexpr const char* kLibrary = "MAGNETON_CUPTI_LIB";               // path of libmagneton_cupti.so
inline constexpr const char* kCudaInjection = "CUDA_INJECTION64_PATH";
inline constexpr const char* kNvtxInjection = "NVTX_INJECTION64_PATH";

// Which energy samplers MAGNETON_RECORD_ENERGY asks for: "all" or "1", "none"
// or "0", or a comma-separated list of nvml, rapl, procfs. False when a name
// is unknown or the list is empty.
struct EnergySources {
  bool nvml = true, rapl = true, procfs = true;
  bool any() const { return nvml || rapl || procfs; }
};

inline bool ParseEnergySources(std::string_view text, EnergySources* out) {
  if (text == "all" || text == "1") return *out = EnergySources{}, true;
  if (text == "none" || text == "0") return *out = EnergySources{false, false, false}, true;
  EnergySources s{false, false, false};
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    if (name == "nvml") s.nvml = true;
    else if (name == "rapl") s.rapl = true;
    else if (name == "procfs") s.procfs = true;
    else return false;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (!s.any()) return false;
  *out = s;
  return true;
}

}  // namespace magneton::capture::env
