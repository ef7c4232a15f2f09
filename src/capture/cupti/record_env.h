// How `magneton record` talks to the injection library in the child process:
// environment variables, set by the CLI, read once at CUDA initialization.
// Header only, so the CLI can share the names without linking capture code.
#pragma once

namespace magneton::capture::env {

inline constexpr const char* kOutput = "MAGNETON_RECORD_OUTPUT";            // base path; files are <base>.<pid>.mgt
inline constexpr const char* kCommand = "MAGNETON_RECORD_COMMAND";          // the command line, for RunInfo
inline constexpr const char* kStacks = "MAGNETON_RECORD_STACKS";            // "1": native stacks at launches
inline constexpr const char* kApi = "MAGNETON_RECORD_API";                 // "launches" (default), "all", "none"
inline constexpr const char* kOnlyRanges = "MAGNETON_RECORD_ONLY_RANGES";   // NVTX range name prefix
inline constexpr const char* kDelay = "MAGNETON_RECORD_DELAY_S";            // seconds before recording starts
inline constexpr const char* kDuration = "MAGNETON_RECORD_DURATION_S";      // seconds of recording
inline constexpr const char* kStartPaused = "MAGNETON_RECORD_START_PAUSED"; // "1": wait for magneton.start()
inline constexpr const char* kEnergy = "MAGNETON_RECORD_ENERGY";            // "0": no energy samplers
inline constexpr const char* kNvtx = "MAGNETON_RECORD_NVTX";                // "0": no NVTX ranges
inline constexpr const char* kDump = "MAGNETON_CUPTI_DUMP";                 // directory for raw activity dumps
inline constexpr const char* kDumpMaxMb = "MAGNETON_CUPTI_DUMP_MAX_MB";     // dump size cap (default 8)
inline constexpr const char* kLibrary = "MAGNETON_CUPTI_LIB";               // path of libmagneton_cupti.so
inline constexpr const char* kCudaInjection = "CUDA_INJECTION64_PATH";
inline constexpr const char* kNvtxInjection = "NVTX_INJECTION64_PATH";

}  // namespace magneton::capture::env
