// Every stat a run can carry (run.h, Stat): the name and severity stored in
// the run file, and what the stat counts. Emitters name an entry rather than
// spell the strings, so a name or a severity is written in one place and a
// misspelt stat fails to compile. docs/cli.md ("info") shows them in a run.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/run.h"

namespace magneton {

// How much a stat says about the run's trustworthiness.
enum class Severity {
  kInfo,      // a note: something was absent or done another way
  kDataLoss,  // records are missing or wrong: figures may be low
  kError,     // a part of the capture did not run at all
};

// The stored text: "info", "data_loss", "error".
std::string_view SeverityName(Severity severity);

struct StatDef {
  std::string_view name;         // as stored: "cupti_records_dropped"
  Severity severity;
  std::string_view description;  // what the value counts; stored as is where a site adds no detail
};

// One entry per stat: X(identifier, "stored name", severity, "description").
// The stats that the Python side emits (python/magneton) are listed too, so
// that this is the whole list a run file can hold.
#define MAGNETON_STATS(X)                                                                                               \
  /* run store (src/core) */                                                                                           \
  X(kStoreDanglingReferences, "store.dangling_references", kDataLoss,                                                  \
    "references to rows missing from the file, set to none on load")                                                   \
  X(kStoreIncomplete, "store.incomplete", kDataLoss,                                                                   \
    "the recording did not close the run file (killed?); its last second may be missing")                              \
  /* samplers (src/energy) */                                                                                          \
  X(kNvmlUnavailable, "nvml_unavailable", kInfo, "NVML could not be opened or lists no usable GPU")                    \
  X(kRaplUnavailable, "rapl_unavailable", kInfo, "neither powercap nor the perf power PMU can be read")               \
  X(kMeterUnavailable, "meter_unavailable", kInfo, "the external power meter's file could not be opened")            \
  X(kProcfsUnavailable, "procfs_unavailable", kInfo, "the process's CPU time could not be read from /proc")           \
  X(kNvmlEnergyCounterUnavailable, "nvml_energy_counter_unavailable", kInfo, "a GPU whose total energy counter NVML " \
    "cannot read")                                                                                                     \
  X(kNvmlPowerInstantUnavailable, "nvml_power_instant_unavailable", kInfo, "a GPU whose instant power NVML cannot read") \
  X(kNvmlPowerUsageUnavailable, "nvml_power_usage_unavailable", kInfo, "a GPU whose averaged power NVML cannot read")   \
  X(kNvmlReadErrors, "nvml_read_errors", kDataLoss, "NVML readings that failed while sampling")                       \
  X(kRaplZoneUnreadable, "rapl_zone_unreadable", kInfo, "a powercap zone whose energy counter cannot be read")        \
  X(kPerfPowerEventUnusable, "perf_power_event_unusable", kInfo, "a perf power event that could not be opened")       \
  X(kRaplCounterWraps, "rapl_counter_wraps", kInfo, "energy counter wrap-arounds unwrapped")                          \
  X(kRaplReadErrors, "rapl_read_errors", kDataLoss, "counter reads that failed")                                      \
  X(kPerfPowerCounterWraps, "perf_power_counter_wraps", kInfo, "energy counter wrap-arounds unwrapped")               \
  X(kPerfPowerReadErrors, "perf_power_read_errors", kDataLoss, "counter reads that failed")                           \
  X(kMeterBadLines, "meter_bad_lines", kDataLoss, "meter lines that are not 't_ns,watts[,channel]'")                  \
  X(kMeterOutOfOrder, "meter_out_of_order", kDataLoss,                                                                 \
    "meter readings older than the previous one of their channel, skipped")                                            \
  X(kSamplerStartFailed, "sampler_start_failed", kError, "a sampler that opened but could not start")                 \
  X(kSamplerFailed, "sampler_failed", kInfo, "a sampler that could not start; its sensors are missing")               \
  X(kEnergyUnavailable, "energy_unavailable", kDataLoss, "energy was asked for but this build cannot measure it")      \
  X(kEnergyModuleMissing, "energy_module_missing", kInfo, "magneton._energy could not be imported (Python)")          \
  /* CUPTI injection (src/capture/cupti) */                                                                            \
  X(kCuptiUnavailable, "cupti_unavailable", kError, "CUPTI could not be loaded or subscribed to")                     \
  X(kCuptiTracingDisabled, "cupti_tracing_disabled", kError, "tracing was switched off while the program ran")        \
  X(kApiLaunchesRecordedAsAll, "api_launches_recorded_as_all", kInfo,                                                  \
    "--only-ranges: every CUDA API call is recorded (--api all), since the launch-only selection records nothing "   \
    "when switched inside NVTX ranges")                                                                                \
  X(kCuptiFlushPeriodUnavailable, "cupti_flush_period_unavailable", kInfo,                                             \
    "CUPTI's periodic flush could not be set; records reach the file when a buffer fills and at stop")                \
  X(kCuptiDumpFailed, "cupti_dump_failed", kInfo, "the raw activity dump could not be written")                      \
  X(kCuptiClockKept, "cupti_clock_kept", kInfo,                                                                         \
    "CUPTI refused the timestamp callback at a second start in the process; the one registered before stays "         \
    "(another CUPTI client in between would have set its own clock)")                                                 \
  X(kCuptiDetachFailed, "cupti_detach_failed", kInfo,                                                                  \
    "CUPTI could not be detached when the recording stopped (cuptiFinalize); the program may run slower after it")   \
  X(kCuptiKindUnavailable, "cupti_kind_unavailable", kInfo, "an activity kind CUPTI would not enable")               \
  X(kNvtxUnavailable, "nvtx_unavailable", kInfo, "NVTX ranges could not be recorded")                                \
  X(kStacksUnavailable, "stacks_unavailable", kInfo, "call stacks of API calls could not be recorded")              \
  X(kCuptiRecordsDropped, "cupti_records_dropped", kDataLoss,                                                          \
    "activity records CUPTI dropped because no buffer was free")                                                       \
  X(kCuptiBuffersRefused, "cupti_buffers_refused", kDataLoss,                                                          \
    "requests for an activity buffer while all were waiting to be written")                                            \
  X(kCuptiRecordsMalformed, "cupti_records_malformed", kDataLoss,                                                      \
    "CUPTI activity records shorter than their kind's structure")                                                      \
  X(kCuptiApiCallsFolded, "cupti_api_calls_folded", kInfo,                                                             \
    "polling CUDA API calls counted in another call's row (api_calls.count) rather than a row of their own")          \
  X(kCuptiSyncsFolded, "cupti_syncs_folded", kInfo,                                                                     \
    "synchronization records of folded polling calls merged into their row's, which spans the polls")                  \
  X(kCuptiRecorderRowsFolded, "cupti_recorder_rows_folded", kInfo,                                                     \
    "the recorder's own kernels, copies and API calls not written as rows (one kernel row per stretch stands for them)") \
  X(kNvtxRangeEndsUnmatched, "nvtx_range_ends_unmatched", kInfo, "NVTX range ends whose start was not recorded")     \
  X(kNvtxRangesOpenAtStop, "nvtx_ranges_open_at_stop", kInfo,                                                          \
    "NVTX ranges still open when recording stopped; they end there")                                                   \
  /* torch and JAX recorders (src/capture/torch, python/magneton) */                                                   \
  X(kKernelTracingUnavailable, "kernel_tracing_unavailable", kInfo, "kernels are not recorded: CUPTI is off or busy")  \
  X(kKernelTracingFailed, "kernel_tracing_failed", kDataLoss, "the kernel tracer failed to flush: kernels are missing") \
  X(kKernelFlushFailed, "kernel_flush_failed", kDataLoss, "kernels held for linking could not be written")           \
  X(kKernelLinkingFailed, "kernel_linking_failed", kDataLoss, "kernels could not be linked to their operators")      \
  X(kRecorderKernels, "recorder_kernels", kInfo,                                                                       \
    "kernel rows of the fingerprinting's own work (one per stretch on a stream: cupti_recorder_rows_folded)")                                          \
  X(kKernelsNotLinked, "kernels_not_linked", kDataLoss,                                                                \
    "kernels linked to no operator (no external correlation record and no launch inside an operator)")               \
  X(kDataflowAliasedInputs, "dataflow_aliased_inputs", kInfo,                                                          \
    "op inputs that matched no produced value, linked to their storage's last writer")                                 \
  X(kDataflowAliasedInputsUnlinked, "dataflow_aliased_inputs_unlinked", kDataLoss,                                     \
    "aliased inputs whose writer was already written to the store: the edge is missing")                               \
  X(kFingerprintFailures, "fingerprint_failures", kInfo,                                                               \
    "tensors whose fingerprint could not be computed (complex, sparse, ...)")                                          \
  X(kTensorsWithoutLayout, "tensors_without_layout", kInfo,                                                            \
    "tensors with no plain strided layout (nested, symbolic), left out of the dataflow")                               \
  X(kRecorderStoreWaits, "recorder_store_waits", kInfo,                                                                \
    "times the program waited for the run store to catch up (op rows held over the limit)")                            \
  X(kRecorderCallbackErrors, "recorder_callback_errors", kDataLoss,                                                    \
    "op callbacks that failed and left their op incomplete (a recorder bug)")                                          \
  X(kJaxHloUnreadable, "jax_hlo_unreadable", kInfo, "jit executables whose HLO could not be read")                   \
  X(kJaxKernelsLinkedByTime, "jax_kernels_linked_by_time", kInfo,                                                      \
    "kernels without an external correlation id, linked to the top-level op whose window holds them")               \
  X(kJaxKernelsLinkedToEquations, "jax_kernels_linked_to_equations", kInfo,                                            \
    "kernels of jit executables linked through XLA's HLO metadata")                                                    \
  X(kJaxNestedTimesEstimated, "jax_nested_times_estimated", kInfo,                                                     \
    "ops inside a jit/scan/while share their parent's measured time in proportion to their eager time")               \
  X(kJaxMeasuredPassFailed, "jax_measured_pass_failed", kError, "the measured pass raised; the run holds no ops")     \
  X(kJaxMeasuredCallsFailed, "jax_measured_calls_failed", kError,                                                      \
    "the program's own calls after the op-level executions raised")                                                    \
  X(kJaxMeasuredCallsHostTimed, "jax_measured_calls_host_timed", kInfo,                                               \
    "no kernel trace: the program's own calls were timed on the host only (step marks); the op-level executions "    \
    "cost the regions")                                                                                               \
  X(kJaxLoopsBoundWhole, "jax_loops_bound_whole", kInfo, "while loops longer than max_unroll were executed as one op") \
  /* operator replay (src/capture/torch, python/magneton/op_replay.py) */                                             \
  X(kReplayOpsSkipped, "replay_ops_skipped", kInfo, "ops with host synchronization were not replayed")               \
  X(kReplayMismatch, "replay_mismatch", kDataLoss, "replayed outputs differ from the recorded fingerprints")         \
  X(kReplayCudaGraphs, "replay_cuda_graphs", kInfo, "operators replayed inside a CUDA graph")                        \
  X(kReplayHostOps, "replay_host_ops", kInfo,                                                                          \
    "operators with no device work (empty CUDA graph): timed on the host, no energy windows")                         \
  X(kReplayCudaGraphFallback, "replay_cuda_graph_fallback", kInfo,                                                     \
    "CUDA graph capture failed; replayed with plain launches")                                                         \
  X(kReplayCudaGraphCapture, "replay_cuda_graph_capture", kInfo, "an operator whose CUDA graph could not be captured") \
  X(kReplayUnmatched, "replay_unmatched", kInfo,                                                                       \
    "replayed keys with no op of the same signature in the run (not stored)")

namespace stats {
#define MAGNETON_STAT_ENTRY(id, name, severity, description) \
  inline constexpr StatDef id{name, Severity::severity, description};
MAGNETON_STATS(MAGNETON_STAT_ENTRY)
#undef MAGNETON_STAT_ENTRY
}  // namespace stats

// Every entry, in the order above.
std::span<const StatDef* const> AllStats();
// The entry stored under `name`; null for a name no entry has.
const StatDef* FindStat(std::string_view name);

// A stat of `def` with its own description (an error message, a count's context).
Stat MakeStat(const StatDef& def, int64_t value, std::string description);
// ... with the entry's description.
Stat MakeStat(const StatDef& def, int64_t value);
// Appends MakeStat(def, value) when something was counted (value != 0).
void AddCount(std::vector<Stat>* stats, const StatDef& def, int64_t value);
// Whether `stat` was made from `def`.
inline bool Is(const Stat& stat, const StatDef& def) { return stat.name == def.name; }

}  // namespace magneton
