// The Run: everything recorded about one process of one workload, in memory.
// Every tool loads it the same way (live capture writes a .mgt store, every
// reader calls LoadRun), so analysis never sees capture code.
//
// Conventions:
//  - Ids are dense: table[i].id == i. Writers assign them in order; LoadRun
//    checks it. Cross references use -1 for "none".
//  - Times are nanoseconds on one clock, RunInfo::clock_domain
//    ("CLOCK_MONOTONIC"); CUPTI, the samplers and the recorders all use it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/replay_status.h"

namespace magneton {

inline constexpr int64_t kNone = -1;
// Kernel::op / Transfer::op of device work the recorder itself launched (the
// fingerprints of a recording pass): not the program's, never aligned or costed.
inline constexpr int64_t kRecorderWork = -2;
// The kernel row that stands for one unbroken stretch of the recorder's own
// kernels and copies on a stream (capture/cupti/recorder_stretches.h).
inline constexpr std::string_view kRecorderWorkName = "[magneton: the recorder's own work]";
inline constexpr int32_t kHostDevice = -1;  // tensors/ops on the CPU

// Memory kinds of Tensor::memory and Transfer::src_memory/dst_memory.
inline constexpr std::string_view kMemoryDevice = "device";
inline constexpr std::string_view kMemoryPinned = "pinned";      // page-locked host memory
inline constexpr std::string_view kMemoryPageable = "pageable";  // ordinary host memory
inline constexpr std::string_view kMemoryManaged = "managed";    // unified memory

struct RunInfo {
  std::string command;          // argv joined, as the user typed it
  std::string host;
  std::string clock_domain = "CLOCK_MONOTONIC";
  std::string magneton_version;
  int64_t pid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::map<std::string, std::string> extra;  // free-form: framework versions, rank, label...
  friend bool operator==(const RunInfo&, const RunInfo&) = default;
};

struct Device {
  int32_t id = 0;               // index into Run::devices
  std::string kind;             // "gpu" or "cpu"
  std::string name;             // "NVIDIA H200"
  std::string uuid;
  int32_t ordinal = 0;          // CUDA ordinal for GPUs
  int64_t memory_bytes = 0;
  friend bool operator==(const Device&, const Device&) = default;
};

// What Fingerprint::spectra hold (the fingerprint encoding's version): files
// of encoding 1 hold leading singular values. Spectra of different kinds are
// not compared.
enum class SpectraKind : uint8_t { kSingularValues = 1, kSchattenNorms = 2 };

// Layout-invariant summary of a tensor's values (see docs/matching.md).
// Permutes, reshapes and contiguous copies leave numel, moments, norms and the
// sorted-value quantiles unchanged; the unfolding spectra are compared as a set.
struct Fingerprint {
  int64_t numel = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
  double l1 = 0, l2 = 0;                  // sum |x|, sqrt(sum x^2)
  std::vector<float> quantiles;            // values at evenly spaced ranks, min..max
  std::vector<std::vector<float>> spectra; // per mode unfolding (docs/fingerprints.md)
  SpectraKind spectra_kind = SpectraKind::kSchattenNorms;
  bool empty() const { return numel == 0; }
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
};

struct Tensor {
  int64_t id = 0;
  int64_t storage = 0;          // storage identity (data pointer or allocation id)
  int64_t offset = 0;           // storage offset, elements
  int64_t version = 0;          // version counter at the time it was seen
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::string dtype;            // "float32", "bfloat16", "int64", ...
  int32_t device = kHostDevice; // Run::devices id, or kHostDevice
  std::string memory;           // kMemory* below; "" where not recorded
  std::optional<Fingerprint> fingerprint;
  int64_t numel() const {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  friend bool operator==(const Tensor&, const Tensor&) = default;
};

struct Op {
  int64_t id = 0;
  int64_t parent = kNone;       // enclosing op (nesting), kNone at top level
  std::string name;             // "aten::addmm", "jax:dot_general"
  std::string schema;           // full signature where known
  std::string framework;        // "torch", "jax", "nvtx"
  int64_t sequence = kNone;     // autograd sequence number
  int64_t forward_op = kNone;   // for backward ops: the forward op they belong to
  int64_t thread = 0;
  int64_t start_ns = 0, end_ns = 0;
  int64_t stack = kNone;        // Run::stacks id of the call site
  int32_t device = kHostDevice;
  std::vector<int64_t> inputs;  // tensor ids, argument order
  std::vector<int64_t> outputs;
  // The arguments that are not tensors, as "name=value" joined by ", "
  // ("dtype=float16, non_blocking=True"); None-valued ones left out. They
  // steer the operator as much as its inputs' layouts do.
  std::string args;
  friend bool operator==(const Op&, const Op&) = default;
};

struct Kernel {
  int64_t id = 0;
  std::string name;             // demangled
  int32_t device = 0;
  int64_t stream = 0;
  int64_t start_ns = 0, end_ns = 0;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t registers = 0;
  int32_t static_smem = 0, dynamic_smem = 0;
  int64_t correlation = 0;      // CUPTI correlation id of the launching API call
  int64_t op = kNone;           // Run::ops id that launched it, or kRecorderWork
  int64_t stack = kNone;        // native+python stack at launch, when recorded
  friend bool operator==(const Kernel&, const Kernel&) = default;
};

// Memcpy, memset and synchronization records, CUPTI-style.
struct Transfer {
  int64_t id = 0;
  std::string kind;             // "HtoD", "DtoH", "DtoD", "memset", "sync", ...
  int64_t bytes = 0;
  int32_t device = 0;
  int64_t stream = 0;
  int64_t start_ns = 0, end_ns = 0;
  int64_t correlation = 0;
  int64_t op = kNone;           // as Kernel::op
  // Where a copy reads and writes (kMemory*; "" where not recorded, as for
  // memsets), and whether the host waited for it (a copy from pageable
  // memory, or a synchronous cudaMemcpy).
  std::string src_memory, dst_memory;
  bool synchronous = false;
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

struct ApiCall {
  int64_t id = 0;
  std::string name;             // "cudaLaunchKernel", "cuMemcpyAsync"
  std::string domain;           // "runtime" or "driver"
  int64_t thread = 0;
  int64_t start_ns = 0, end_ns = 0;
  int64_t correlation = 0;
  int64_t stack = kNone;
  // Identical calls this row stands for: a thread polling the device
  // (cudaEventQuery in a loop) becomes one row from the first call's start
  // to the last one's end (capture/cupti/activity_processor.h).
  int64_t count = 1;
  friend bool operator==(const ApiCall&, const ApiCall&) = default;
};

// A named time range: NVTX push/pop or start/end, JAX named scopes, user windows.
struct Range {
  int64_t id = 0;
  std::string name;
  std::string domain;           // NVTX domain, "magneton" for Monitor windows
  int64_t thread = 0;
  int64_t start_ns = 0, end_ns = 0;
  int64_t parent = kNone;
  friend bool operator==(const Range&, const Range&) = default;
};

// Magneton's own ranges: Monitor windows, and the zero-length marks the
// recorder writes at the end of each of the program's steps (`rec.step()`).
inline constexpr const char* kMagnetonDomain = "magneton";
inline constexpr const char* kStepMark = "step";
inline bool IsStepMark(const Range& r) {
  return r.end_ns <= r.start_ns && r.domain == kMagnetonDomain && r.name == kStepMark;
}
// RunInfo extra: where a measured pass stopped tracing kernels (run clock,
// ns); its later steps ran untraced, with step marks and energy readings.
inline constexpr const char* kTracedUntilKey = "kernels_traced_until_ns";
// RunInfo extra: "FROM TO" (run clock, ns), where the recorder held the
// device idle with the samplers and the kernel trace running, after the
// program's work: counter intervals of known idle for the activity model
// (docs/energy.md). The run's window ends at FROM.
inline constexpr const char* kIdleHeldKey = "idle_held_ns";
// RunInfo extra: "true" for a recording pass (every value fingerprinted: its
// operators' times include the fingerprinting), "false" for a measured pass.
inline constexpr const char* kFingerprintsKey = "fingerprints";
// RunInfo extra: "true" where the run is a whole script, set-up and summary
// included (`python -m magneton record --pass recording|measured`), not a
// step the program's own code bracketed.
inline constexpr const char* kWholeScriptKey = "whole_script";

struct Frame {
  int64_t id = 0;
  std::string kind;             // "python" or "native"
  std::string function;
  std::string file;
  int32_t line = 0;
  std::string module;           // shared object for native frames
  friend bool operator==(const Frame&, const Frame&) = default;
};

struct Stack {
  int64_t id = 0;
  std::vector<int64_t> frames;  // innermost first
  friend bool operator==(const Stack&, const Stack&) = default;
};

// A time series of one sensor of one device: power, energy counter, clocks,
// utilization, CPU time. Only changes of a reading are stored, each with the
// time it was first seen, so window edges can be aligned to sensor updates.
struct SensorSeries {
  int64_t id = 0;
  int32_t device = 0;           // Run::devices id
  std::string sensor;           // see docs/run-format.md: "power.instant", "energy.total", ...
  std::string unit;             // "W", "J", "MHz", "%", "s"
  std::string source;           // "nvml", "rapl", "meter", "procfs", "estimate"
  std::vector<int64_t> t_ns;
  std::vector<double> value;
  friend bool operator==(const SensorSeries&, const SensorSeries&) = default;
};

// Energy of one operator key measured by replaying it (docs/energy.md).
struct ReplayMeasurement {
  int64_t id = 0;
  int64_t op = kNone;           // a representative op
  std::string key;              // operator + shapes + dtypes + kernels
  int32_t device = 0;
  int64_t calls = 0;            // calls per window
  int32_t repeats = 0;          // windows measured
  double seconds_per_call = 0;
  double joules_per_call = 0;   // total energy (static + dynamic)
  double idle_watts = 0;        // subtract x seconds for the above-idle part
  double cv = 0;                // coefficient of variation over repeats
  std::string status;           // a ReplayStatusName (core/replay_status.h)
  friend bool operator==(const ReplayMeasurement&, const ReplayMeasurement&) = default;
};

// A replay the analysis costs an op with: kOk, or kHost (the op launched no
// device work: its time is measured and its energy is idle power over it).
inline bool ReplayUsable(const ReplayMeasurement& m) {
  const auto s = ParseReplayStatus(m.status);
  return s == ReplayStatus::kOk || s == ReplayStatus::kHost;
}

// A problem in the input, counted rather than only logged (Perfetto style).
struct Stat {
  std::string name;             // "cupti_records_dropped"
  std::string severity;         // "info", "data_loss", "error"
  int64_t value = 0;
  std::string description;
  friend bool operator==(const Stat&, const Stat&) = default;
};

struct Run {
  RunInfo info;
  std::vector<Device> devices;
  std::vector<Op> ops;
  std::vector<Tensor> tensors;
  std::vector<Kernel> kernels;
  std::vector<Transfer> transfers;
  std::vector<ApiCall> api_calls;
  std::vector<Range> ranges;
  std::vector<Frame> frames;
  std::vector<Stack> stacks;
  std::vector<SensorSeries> series;
  std::vector<ReplayMeasurement> replays;
  std::map<std::string, std::string> config;  // configuration snapshot
  std::vector<Stat> stats;

  // The series for (device, sensor), or nullptr.
  const SensorSeries* FindSeries(int32_t device, const std::string& sensor) const {
    for (const auto& s : series)
      if (s.device == device && s.sensor == sensor) return &s;
    return nullptr;
  }
};

// A RunInfo extra entry that is a flag: "true", else absent or off.
inline bool ExtraFlag(const Run& run, const char* key) {
  auto it = run.info.extra.find(key);
  return it != run.info.extra.end() && it->second == "true";
}
// A recording pass: its values were fingerprinted (kFingerprintsKey).
inline bool Fingerprinted(const Run& run) { return ExtraFlag(run, kFingerprintsKey); }
// A whole script's run, set-up and summary included (kWholeScriptKey).
inline bool WholeScript(const Run& run) { return ExtraFlag(run, kWholeScriptKey); }

}  // namespace magneton
