// Operator replay: capture (a RecordFunction callback that clones the inputs
// of selected operator calls) and measurement (dispatcher calls in windows
// spanning several sensor updates). docs/energy.md, "Replay".
#include "capture/torch/replay.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <thread>
#include <unordered_map>

#include "capture/torch/aten_values.h"
#include "core/stats_registry.h"
#include "energy/clock.h"
#ifdef MAGNETON_HAVE_SAMPLERS
#include "energy/energy_curve.h"
#include "energy/live_series.h"
#endif

namespace magneton::capture {

namespace {

using energy::NowNs;

bool Keyable(const at::Tensor& t) {
  try {
    return !(t.is_sparse() || t.is_nested() || !t.has_storage());
  } catch (const std::exception&) {
    return false;
  }
}

const std::set<std::string>& HostSyncOps() {
  static const std::set<std::string> ops = {
      "aten::item",          "aten::_local_scalar_dense", "aten::is_nonzero", "aten::nonzero",
      "aten::unique",        "aten::_unique",             "aten::_unique2",   "aten::unique_consecutive",
      "aten::unique_dim",    "aten::masked_select",       "aten::equal",      "aten::allclose",
      "aten::record_stream", "aten::set_",                "aten::_assert_async"};
  return ops;
}

// Operators whose outputs hold whatever the allocator returned.
bool UninitializedOp(const std::string& name) {
  static const std::set<std::string> names = {"aten::empty", "aten::empty_like", "aten::empty_strided",
                                              "aten::new_empty", "aten::new_empty_strided", "aten::resize_",
                                              "aten::empty_permuted"};
  return names.count(name) > 0;
}

bool RandomOp(const c10::FunctionSchema& schema) {
  static const std::set<std::string> names = {
      "aten::bernoulli", "aten::bernoulli_", "aten::dropout", "aten::dropout_", "aten::native_dropout",
      "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout", "aten::rand",
      "aten::rand_like", "aten::randn", "aten::randn_like", "aten::randint", "aten::randint_like",
      "aten::randperm", "aten::normal", "aten::normal_", "aten::uniform_", "aten::exponential_",
      "aten::geometric_", "aten::cauchy_", "aten::log_normal_", "aten::random_", "aten::multinomial",
      "aten::rrelu", "aten::rrelu_", "aten::rrelu_with_noise", "aten::poisson", "aten::binomial",
      "aten::_fused_dropout", "aten::_standard_gamma"};
  if (names.count(schema.name())) return true;
  for (const auto& a : schema.arguments())
    if (a.type()->str().find("Generator") != std::string::npos) return true;
  return false;
}

// Copies of a call's tensors, sharing copies where the originals were one
// tensor (add_(x, x) stays aliased). Each copy keeps the original's sizes and
// strides (over a fresh span of storage), dtype and device.
class Cloner {
 public:
  at::Tensor Tensor(const at::Tensor& t) {
    if (!t.defined()) return t;
    auto it = done_.find(t.unsafeGetTensorImpl());
    if (it != done_.end()) return it->second;
    at::Tensor src = t.detach();
    at::Tensor out;
    if (src.numel() == 0 || !src.has_storage()) {
      out = src.clone();
    } else {
      int64_t span = 1;
      for (int64_t d = 0; d < src.dim(); ++d) span += (src.size(d) - 1) * src.stride(d);
      at::Tensor flat = at::empty({span}, src.options());
      flat.copy_(src.as_strided({span}, {1}, src.storage_offset()));
      out = flat.as_strided(src.sizes(), src.strides(), 0);
    }
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) out.unsafeGetTensorImpl()->set_wrapped_number(true);
    done_.emplace(t.unsafeGetTensorImpl(), out);
    return out;
  }
  c10::IValue Value(const c10::IValue& v) {
    if (v.isTensor()) return Tensor(v.toTensor());
    if (v.isList()) {
      auto list = v.toList();
      c10::impl::GenericList out(list.elementType());
      out.reserve(list.size());
      for (size_t k = 0; k < list.size(); ++k) out.push_back(Value(list.get(k)));
      return out;
    }
    if (v.isTuple()) {
      std::vector<c10::IValue> elems;
      for (const auto& e : v.toTupleRef().elements()) elems.push_back(Value(e));
      return c10::ivalue::Tuple::create(std::move(elems));
    }
    return v;
  }

 private:
  std::unordered_map<const c10::TensorImpl*, at::Tensor> done_;
};

// Arguments for one more call: the written ones copied, the rest shared.
std::vector<c10::IValue> FreshArgs(const ReplayEntry& e) {
  c10::NoGradGuard no_grad;
  at::RecordFunctionGuard no_record(false);
  Cloner cloner;
  std::vector<c10::IValue> args = e.args;
  for (size_t i = 0; i < args.size(); ++i)
    if (i < e.writes.size() && e.writes[i]) args[i] = cloner.Value(args[i]);
  return args;
}

std::vector<at::Tensor> OutputTensors(const std::vector<c10::IValue>& outs, const std::vector<c10::IValue>& args,
                                      const std::vector<bool>& writes) {
  std::vector<at::Tensor> ts;
  for (const auto& v : outs) ForEachTensor(v, [&](const at::Tensor& t) { ts.push_back(t); });
  if (ts.empty())  // in-place ops that return nothing (_foreach_add_)
    for (size_t i = 0; i < args.size(); ++i)
      if (i < writes.size() && writes[i]) ForEachTensor(args[i], [&](const at::Tensor& t) { ts.push_back(t); });
  return ts;
}

std::vector<Fingerprint> Fingerprints(const std::vector<at::Tensor>& ts, const FingerprintOptions& o) {
  std::vector<Fingerprint> fps;
  for (const auto& t : ts) {
    auto fp = ComputeFingerprint(t, o);
    fps.push_back(fp.ok() ? std::move(fp.value()) : Fingerprint{});
  }
  return fps;
}

// ------------------------------------------------------------------ capture

thread_local int tl_depth = 0;

}  // namespace

struct ReplayCapture::State {
  ReplaySelection selection;
  FingerprintOptions fingerprint;
  std::atomic<bool> active{false};
  std::atomic<int64_t> ordinal{0};
  at::CallbackHandle handle = 0;
  mutable std::mutex mu;
  std::set<std::string> keys;
  std::vector<std::shared_ptr<ReplayEntry>> entries;
  std::atomic<int64_t> errors{0};
};

namespace {

std::atomic<std::shared_ptr<ReplayCapture::State>> g_capture;

struct CaptureContext : at::ObserverContext {
  std::shared_ptr<ReplayCapture::State> state;
  std::shared_ptr<ReplayEntry> entry;
  std::vector<c10::IValue> written;  // the written arguments (inputs are not valid at the end)
  int64_t start_ns = 0;
};

std::shared_ptr<ReplayEntry> MaybeCapture(const at::RecordFunction& fn, ReplayCapture::State& st, int64_t ordinal,
                                          bool top_level) {
  if (fn.scope() != at::RecordScope::FUNCTION) return nullptr;
  auto schema = fn.operator_schema();
  if (!schema) return nullptr;
  const std::string name = fn.name();
  const auto inputs = fn.inputs();
  std::string sig = name + "(", strides, scalars;
  c10::Device device(c10::kCPU);
  bool have_device = false;
  bool first = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool tensors = false;
    ForEachTensor(inputs[i], [&](const at::Tensor& t) {
      tensors = true;
      if (!Keyable(t)) return;
      sig += (first ? "" : ",") + DtypeName(t.scalar_type()) + "[" + Join(t.sizes(), "x") + "]";
      strides += (first ? "[" : ",[") + Join(t.strides(), ",") + "]";
      first = false;
      if (!have_device) device = t.device(), have_device = true;
    });
    if (!tensors) {
      scalars += (scalars.empty() ? "" : ",") + ScalarText(inputs[i]);
      if (inputs[i].isDevice() && !have_device) device = inputs[i].toDevice(), have_device = true;
    }
  }
  sig += ")";
  const auto& sel = st.selection;
  if (!(sel.all || sel.signatures.count(sig) || (sel.names.count(name) && (!sel.top_level_only || top_level))))
    return nullptr;
  std::string key = sig + " strides " + strides + " args [" + scalars + "] @" + device.str();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (!st.keys.insert(key).second) return nullptr;
  }
  auto e = std::make_shared<ReplayEntry>();
  e->key = key;
  e->signature = sig;
  e->name = schema->name();
  e->overload = schema->overload_name();
  e->ordinal = ordinal;
  e->top_level = top_level;
  e->device = device;
  for (const auto& a : schema->arguments()) e->writes.push_back(a.alias_info() && a.alias_info()->isWrite());
  e->random = RandomOp(*schema);
  e->uninitialized = UninitializedOp(e->name);
  if (HostSyncOps().count(e->name)) e->unsupported = "synchronizes with the host";
  for (const auto& v : inputs)
    if (v.isObject() || v.isCapsule() || v.isFuture() || v.isPyObject() || v.isRRef() || v.isStream())
      e->unsupported = std::string("argument of kind ") + v.tagKind();
  if (e->unsupported.empty()) {
    c10::NoGradGuard no_grad;
    at::RecordFunctionGuard no_record(false);
    Cloner cloner;
    for (const auto& v : inputs) e->args.push_back(cloner.Value(v));
    if (e->random) {
      try {
        auto gen = at::globalContext().defaultGenerator(device);
        std::lock_guard<std::mutex> lock(gen.mutex());
        e->rng_state = gen.get_state();
      } catch (const std::exception&) {
        // no default generator for this device: the check compares shapes only
      }
    }
  }
  std::lock_guard<std::mutex> lock(st.mu);
  st.entries.push_back(e);
  return e;
}

std::unique_ptr<at::ObserverContext> CaptureStart(const at::RecordFunction& fn) {
  auto st = g_capture.load(std::memory_order_acquire);
  if (!st || !st->active.load(std::memory_order_relaxed)) return nullptr;
  auto ctx = std::make_unique<CaptureContext>();
  const bool top_level = tl_depth == 0;
  ++tl_depth;
  ctx->state = st;
  try {
    ctx->entry = MaybeCapture(fn, *st, st->ordinal.fetch_add(1), top_level);
    if (ctx->entry) {
      const auto inputs = fn.inputs();
      for (size_t i = 0; i < inputs.size(); ++i)
        ctx->written.push_back(i < ctx->entry->writes.size() && ctx->entry->writes[i] ? inputs[i] : c10::IValue());
    }
  } catch (...) {
    st->errors.fetch_add(1);
  }
  ctx->start_ns = NowNs();
  return ctx;
}

void CaptureEnd(const at::RecordFunction& fn, at::ObserverContext* base) {
  auto* ctx = static_cast<CaptureContext*>(base);
  if (!ctx) return;
  if (tl_depth > 0) --tl_depth;
  if (!ctx->entry) return;
  ReplayEntry& e = *ctx->entry;
  e.recorded_ns = NowNs() - ctx->start_ns;
  if (!e.unsupported.empty()) return;
  try {
    std::vector<c10::IValue> outs(fn.outputs().begin(), fn.outputs().end());
    e.expected = Fingerprints(OutputTensors(outs, ctx->written, e.writes), ctx->state->fingerprint);
  } catch (...) {
    ctx->state->errors.fetch_add(1);
  }
}

}  // namespace

Result<std::unique_ptr<ReplayCapture>> ReplayCapture::Start(ReplaySelection selection, FingerprintOptions fp) {
  auto st = std::make_shared<State>();
  st->selection = std::move(selection);
  st->fingerprint = fp;
  std::shared_ptr<State> expected;
  if (!g_capture.compare_exchange_strong(expected, st))
    return MakeError(ErrorCode::kInvalidArgument, "magneton.replay: a replay capture is already active in this process");
  tl_depth = 0;
  st->active.store(true);
  at::RecordFunctionCallback cb(&CaptureStart, &CaptureEnd);
  cb.needsInputs(true).needsOutputs(true).scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION});
  st->handle = at::addGlobalCallback(cb);
  return std::unique_ptr<ReplayCapture>(new ReplayCapture(st));
}

ReplayCapture::~ReplayCapture() { Stop(); }

void ReplayCapture::Stop() {
  if (state_->handle) at::removeCallback(state_->handle);
  state_->handle = 0;
  state_->active.store(false);
  std::shared_ptr<State> expected = state_;
  g_capture.compare_exchange_strong(expected, nullptr);
}

std::vector<std::shared_ptr<ReplayEntry>> ReplayCapture::entries() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->entries;
}

int64_t ReplayCapture::seen() const { return state_->ordinal.load(); }

// ------------------------------------------------------------------ measurement

std::string FingerprintDisagreement(const Fingerprint& a, const Fingerprint& b, double rtol) {
  auto differ = [](const char* what, double x, double y) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s %.6g vs %.6g", what, x, y);
    return std::string(buf);
  };
  if (a.numel != b.numel) return differ("numel", static_cast<double>(a.numel), static_cast<double>(b.numel));
  if (a.numel == 0) return "";
  const double n = static_cast<double>(a.numel);
  // The values' scale from the finite statistics only: one NaN in the tensor
  // (uninitialized memory often holds some) makes l2 and mean NaN, and a NaN
  // scale would make even equal values "differ".
  double scale = 1e-30;
  for (double s : {std::fabs(a.l2) / std::sqrt(n), std::fabs(b.l2) / std::sqrt(n), std::fabs(a.mean), std::fabs(b.mean)})
    if (std::isfinite(s)) scale = std::max(scale, s);
  auto close = [&](double x, double y) {
    if (x == y) return true;
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    if (std::isinf(x) || std::isinf(y)) return false;
    return std::fabs(x - y) <= rtol * scale;
  };
  const std::pair<const char*, std::pair<double, double>> stats[] = {
      {"mean", {a.mean, b.mean}}, {"stddev", {a.stddev, b.stddev}}, {"min", {a.min, b.min}},
      {"max", {a.max, b.max}},    {"l1/n", {a.l1 / n, b.l1 / n}},   {"l2/sqrt(n)", {a.l2 / std::sqrt(n), b.l2 / std::sqrt(n)}}};
  for (const auto& [name, v] : stats)
    if (!close(v.first, v.second)) return differ(name, v.first, v.second);
  if (a.quantiles.size() != b.quantiles.size())
    return differ("quantile count", static_cast<double>(a.quantiles.size()), static_cast<double>(b.quantiles.size()));
  for (size_t i = 0; i < a.quantiles.size(); ++i)
    if (!close(a.quantiles[i], b.quantiles[i]))
      return differ(("quantile " + std::to_string(i)).c_str(), a.quantiles[i], b.quantiles[i]);
  return "";
}

namespace {

void Synchronize(const c10::Device& d) {
  if (d.is_cpu()) return;
  try {
    c10::impl::getDeviceGuardImpl(d.type())->synchronizeDevice(d.has_index() ? d.index() : 0);
  } catch (const std::exception&) {
  }
}

struct Handle {
  c10::OperatorHandle op;
};

Handle FindOp(const ReplayEntry& e) {
  return {c10::Dispatcher::singleton().findSchemaOrThrow(e.name.c_str(), e.overload.c_str())};
}

// `n` calls with `args` (written arguments already private to this loop).
void Calls(const Handle& h, const std::vector<c10::IValue>& args, int64_t n) {
  c10::NoGradGuard no_grad;
  at::RecordFunctionGuard no_record(false);
  for (int64_t i = 0; i < n; ++i) {
    torch::jit::Stack stack(args.begin(), args.end());
    h.op.callBoxed(&stack);
  }
}

std::string DeviceLabel(const c10::Device& d) { return d.is_cpu() ? "cpu" : d.str(); }

// Seconds per call of a few synchronized calls: the cost order of the keys.
// The recorded wall time cannot serve: in a recording pass it holds the
// recorder's fingerprinting and the clones of nested ops, so a view of a large
// tensor looked costlier than the matmul beside it and was measured first.
// Random ops get the generator's state back. -1 when the call fails.
double ProbeSeconds(const ReplayEntry& e) {
  if (!e.unsupported.empty()) return -1;
  // Restores the generator on every exit, a failed call included.
  struct GeneratorState {
    std::optional<at::Generator> gen;
    at::Tensor saved;
    ~GeneratorState() {  // never throws: a destructor that throws ends the host program
      if (!gen) return;
      try {
        std::lock_guard<std::mutex> lock(gen->mutex());
        gen->set_state(saved);
      } catch (const std::exception&) {
      }
    }
  };
  try {
    GeneratorState state;
    if (e.random) {
      state.gen = at::globalContext().defaultGenerator(e.device);
      std::lock_guard<std::mutex> lock(state.gen->mutex());
      state.saved = state.gen->get_state();
    }
    Handle h = FindOp(e);
    std::vector<c10::IValue> args = FreshArgs(e);
    Calls(h, args, 1);  // first call: lazy initialization stays out of the estimate
    Synchronize(e.device);
    const int64_t t0 = NowNs();
    Calls(h, args, 3);
    Synchronize(e.device);
    return (NowNs() - t0) * 1e-9 / 3;
  } catch (const std::exception&) {
    return -1;
  }
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}
double Cv(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double m = Mean(v), ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return m != 0 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) / std::fabs(m) : 0;
}

// The sensors behind one torch device: energy curves of the run devices that
// measure it, with the times their readings changed (window edges).
class Sensors {
 public:
  explicit Sensors(const ReplayOptions& o, std::vector<Stat>* stats) {
#ifdef MAGNETON_HAVE_SAMPLERS
    if (o.energy == "none") {
      reason_ = "energy='none'";
      return;
    }
    energy::SamplerOptions so;
    so.nvml = o.energy == "nvml" || o.energy == "auto";
    so.rapl = o.energy == "rapl" || o.energy == "auto";
    so.procfs = false;
    live_ = std::make_unique<energy::LiveSeries>(so);
    if (!live_->measures_energy()) reason_ = live_->why_no_energy();
    for (const auto& p : live_->problems()) stats->push_back(p);
#else
    (void)o;
    (void)stats;
    reason_ = "this build has no energy samplers";
#endif
    if (reason_.empty() && !available()) reason_ = "no energy sensor";
  }
  ~Sensors() {
#ifdef MAGNETON_HAVE_SAMPLERS
    if (live_) live_->Stop();
#endif
  }
  bool available() const {
#ifdef MAGNETON_HAVE_SAMPLERS
    return live_ && live_->measures_energy();
#else
    return false;
#endif
  }
  const std::string& reason() const { return reason_; }

  // Run devices measuring `d`: the GPU of its ordinal, or the CPU packages.
  struct Power {
    bool ok = false;
    double watts = 0;
    double period_s = 0;  // median time between sensor changes
    bool aligned = false;
    std::string source;
  };
  Power Average(const c10::Device& d, int64_t t0, int64_t t1) {
    Power p;
#ifdef MAGNETON_HAVE_SAMPLERS
    if (!live_) return p;
    Run run = live_->Snapshot();
    std::vector<double> periods;
    for (const auto& dev : run.devices) {
      bool match = d.is_cpu() ? dev.kind == "cpu" : (dev.kind == "gpu" && dev.ordinal == (d.has_index() ? d.index() : 0));
      if (!match) continue;
      energy::EnergyCurve curve = energy::BuildEnergyCurve(run, dev.id, t0, t1);
      if (curve.empty() || curve.source == "estimate" || curve.source == "procfs") continue;
      std::vector<int64_t> changes = energy::FindCounterAnchors(run, dev.id).t_ns;
      if (changes.size() < 2)
        for (const char* s : energy::kPowerSensors)
          if (const SensorSeries* ss = run.FindSeries(dev.id, s); ss && ss->t_ns.size() >= 2) {
            changes = ss->t_ns;
            break;
          }
      std::vector<int64_t> inside;
      for (auto t : changes)
        if (t > t0 && t < t1) inside.push_back(t);
      for (size_t i = 1; i < changes.size(); ++i) periods.push_back((changes[i] - changes[i - 1]) * 1e-9);
      // Edges on sensor changes; the first change is skipped (rise time).
      int64_t a = t0, b = t1;
      if (inside.size() >= 3) {
        a = inside[1];
        b = inside.back();
        p.aligned = true;
      }
      if (b <= a) continue;
      p.watts += curve.Between(a, b) / ((b - a) * 1e-9);
      p.ok = true;
      p.source = curve.source;
    }
    if (!periods.empty()) {
      std::nth_element(periods.begin(), periods.begin() + periods.size() / 2, periods.end());
      p.period_s = periods[periods.size() / 2];
    }
#else
    (void)d;
    (void)t0;
    (void)t1;
#endif
    return p;
  }

 private:
#ifdef MAGNETON_HAVE_SAMPLERS
  std::unique_ptr<energy::LiveSeries> live_;
#endif
  std::string reason_;
};

// A key with no device work draws nothing above idle: a call costs the idle
// power over its time, when the device's idle power was measured.
void HostOnlyEnergy(const std::map<std::string, double>& idle, const std::string& device, bool timed,
                    ReplayResult* r) {
  auto it = idle.find(device);
  r->energy = timed && it != idle.end();
  r->m.joules_per_call = r->energy ? it->second * r->m.seconds_per_call : -1;
  r->energy_source = r->energy ? "idle power x host time (no device work)" : "no device work; idle power not measured";
}

class Progress {
 public:
  Progress(bool on, size_t total, double budget_s) : on_(on), total_(total), budget_s_(budget_s), t0_(NowNs()) {}
  void Update(size_t done, bool final = false) {
    if (!on_) return;
    const int64_t now = NowNs();
    if (!final && now - last_ < 250'000'000) return;
    last_ = now;
    const double elapsed = (now - t0_) * 1e-9;
    double left = done ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : budget_s_;
    left = std::min(left, std::max(0.0, budget_s_ - elapsed));
    std::fprintf(stderr, "magneton replay: %zu/%zu ops, %.0f s elapsed, ~%.0f s left\n", done, total_, elapsed,
                 final ? 0.0 : left);
  }

 private:
  bool on_;
  size_t total_;
  double budget_s_;
  int64_t t0_, last_ = 0;
};

}  // namespace

void CallEntry(ReplayEntry& entry, int64_t n) { Calls(FindOp(entry), FreshArgs(entry), n); }

Result<ReplayReport> RunReplay(const std::vector<std::shared_ptr<ReplayEntry>>& entries, const ReplayOptions& o,
                               const RunnerFactory& runners) {
  ReplayReport rep;
  Sensors sensors(o, &rep.stats);
  const bool energy = sensors.available();
  if (!energy) rep.energy_reason = sensors.reason();
  const int64_t start = NowNs();
  const int64_t total_deadline = start + static_cast<int64_t>(o.total_budget_s * 1e9);
  double period_s = 0.1;  // sensor update period, refined from the readings

  // Idle power per device, from a quiet window before any replay.
  std::map<std::string, double> idle;
  if (energy && o.idle_s > 0) {
    std::map<std::string, c10::Device> devices;
    for (const auto& e : entries)
      if (e->unsupported.empty()) devices.emplace(DeviceLabel(e->device), e->device);
    for (const auto& [label, d] : devices) {
      Synchronize(d);
      const int64_t t0 = NowNs();
      std::this_thread::sleep_for(std::chrono::duration<double>(o.idle_s));
      auto p = sensors.Average(d, t0, NowNs());
      if (p.ok) idle[label] = p.watts;
      if (p.period_s > 0) period_s = p.period_s;
    }
  }
  rep.idle_watts = idle;

  // The costliest calls first, by a quick probe of each key: a budget that
  // runs out leaves the cheap keys unmeasured, not the ones that matter.
  std::vector<double> probe(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) probe[i] = ProbeSeconds(*entries[i]);
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return probe[a] > probe[b]; });
  rep.results.resize(entries.size());

  std::mt19937 rng(12345);
  Progress progress(o.progress, entries.size(), o.total_budget_s);
  int64_t graph_fallbacks = 0, graphs = 0, mismatches = 0, unsupported = 0, host_ops = 0;
  for (size_t done = 0; done < order.size(); ++done) {
    progress.Update(done);
    const size_t i = order[done];
    ReplayEntry& e = *entries[i];
    ReplayResult& r = rep.results[i];
    r.m.id = static_cast<int64_t>(i);
    r.m.op = e.ordinal;
    r.m.key = e.key;
    r.m.device = e.device.is_cpu() ? kHostDevice : (e.device.has_index() ? e.device.index() : 0);
    r.m.joules_per_call = -1;
    r.m.idle_watts = idle.count(DeviceLabel(e.device)) ? idle[DeviceLabel(e.device)] : 0;
    r.m.seconds_per_call = e.recorded_ns * 1e-9;
    r.energy_source = energy ? "" : sensors.reason();
    if (!e.unsupported.empty()) {
      r.m.status = "unsupported";
      r.detail = e.unsupported;
      ++unsupported;
      continue;
    }
    if (NowNs() >= total_deadline) {
      r.m.status = "budget";
      r.detail = "total time budget spent before this operator";
      continue;
    }
    const int64_t op_deadline = std::min(total_deadline, NowNs() + static_cast<int64_t>(o.op_budget_s * 1e9));
    // Random ops draw from the default generator in every call: the workload's
    // random stream is put back as it was once the key is measured.
    struct RestoreRng {
      std::optional<at::Generator> gen;
      at::Tensor state;
      ~RestoreRng() {
        if (!gen) return;
        try {
          std::lock_guard<std::mutex> lock(gen->mutex());
          gen->set_state(state);
        } catch (...) {
        }
      }
    } restore_rng;
    if (e.random) {
      try {
        restore_rng.gen = at::globalContext().defaultGenerator(e.device);
        std::lock_guard<std::mutex> lock(restore_rng.gen->mutex());
        restore_rng.state = restore_rng.gen->get_state();
      } catch (const std::exception&) {
        restore_rng.gen.reset();
      }
    }
    try {
      Handle h = FindOp(e);
      // The check call: fresh copies of written inputs, the recorded RNG state.
      {
        std::vector<c10::IValue> args = FreshArgs(e);
        std::optional<at::Generator> gen;
        at::Tensor saved;
        if (e.random && e.rng_state.defined()) {
          gen = at::globalContext().defaultGenerator(e.device);
          std::lock_guard<std::mutex> lock(gen->mutex());
          saved = gen->get_state();
          gen->set_state(e.rng_state);
        }
        torch::jit::Stack stack(args.begin(), args.end());
        {
          c10::NoGradGuard no_grad;
          at::RecordFunctionGuard no_record(false);
          h.op.callBoxed(&stack);
        }
        if (gen) {
          std::lock_guard<std::mutex> lock(gen->mutex());
          gen->set_state(saved);
        }
        Synchronize(e.device);
        std::vector<Fingerprint> got = Fingerprints(OutputTensors(stack, args, e.writes), {});
        std::string why = got.size() == e.expected.size()
                              ? ""
                              : std::to_string(got.size()) + " vs " + std::to_string(e.expected.size()) + " outputs";
        for (size_t k = 0; why.empty() && k < got.size(); ++k) {
          const bool values = !(e.uninitialized || (e.random && !e.rng_state.defined()));
          why = values ? FingerprintDisagreement(got[k], e.expected[k], o.fingerprint_rtol)
                       : (got[k].numel == e.expected[k].numel ? "" : "numel differs");
          if (!why.empty()) why = "output " + std::to_string(k) + ": " + why;
        }
        if (!why.empty()) {
          r.m.status = "mismatch";
          r.detail = "replayed outputs differ from the recorded fingerprints (" + why + ", replayed vs recorded)";
          ++mismatches;
        }
      }
      // Warm-up and a first estimate of the time per call.
      std::vector<c10::IValue> work = FreshArgs(e);
      int64_t warm = 0;
      const int64_t w0 = NowNs();
      while (warm < 3 || (NowNs() - w0 < 20'000'000 && warm < 1000)) {
        Calls(h, work, 1);
        ++warm;
        if (warm == 3) Synchronize(e.device);
      }
      Synchronize(e.device);
      double per_call = std::max(1e-9, (NowNs() - w0) * 1e-9 / static_cast<double>(warm));

      CallRunner runner = runners ? runners(i) : CallRunner{};
      bool host_only = false;
      if (runner) {
        try {
          const int64_t probe = runner(1);
          host_only = probe < 0;  // an empty CUDA graph: the op launches no device work
          if (probe <= 0) runner = {};
        } catch (const std::exception&) {
          runner = {};
        }
        if (runner) {
          r.cuda_graph = true;
          ++graphs;
        } else if (host_only) {
          ++host_ops;
        } else {
          ++graph_fallbacks;
        }
      }
      // With no device work nothing is drawn above idle: no energy windows
      // (their CV would never converge), short windows of host time instead.
      const bool measure_energy = energy && !host_only;
      std::vector<double> seconds, joules;
      int64_t window_calls = 0;
      int short_windows = 0;
      bool converged = false, budget = false;
      while (static_cast<int>(seconds.size()) < o.max_repeats) {
        const double window = host_only ? std::min(o.window_s, o.host_window_s)
                                        : std::max(o.window_s, measure_energy ? (o.min_updates + 1) * period_s : 0.0);
        if (NowNs() + static_cast<int64_t>(window * 1e9) > op_deadline) {
          budget = true;
          break;
        }
        work = FreshArgs(e);
        // Launches (and graph replays) are asynchronous: a loop bounded by host
        // time alone queues far more than the window holds. Launch the calls
        // the window holds at the current estimate (and stop at the window's
        // host time, for host-bound ops), then time what they took.
        const int64_t target = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(window / per_call)));
        const int64_t chunk = std::clamp<int64_t>(static_cast<int64_t>(0.01 / per_call), 1, target);
        Synchronize(e.device);
        const int64_t t0 = NowNs();
        int64_t calls = 0;
        do {
          const int64_t n = std::min(chunk, target - calls);
          calls += runner ? runner(n) : (Calls(h, work, n), n);
        } while (calls < target && NowNs() - t0 < static_cast<int64_t>(window * 1e9));
        Synchronize(e.device);
        const int64_t t1 = NowNs();
        const double s = (t1 - t0) * 1e-9 / static_cast<double>(calls);
        per_call = s;
        // Cut short by a high estimate (the warm-up's plain launches before a
        // graph): too few sensor updates. Again, at the corrected estimate.
        if ((t1 - t0) * 1e-9 < 0.8 * window && short_windows < 3) {
          ++short_windows;
          continue;
        }
        window_calls = calls;
        seconds.push_back(s);
        if (measure_energy) {
          auto p = sensors.Average(e.device, t0, t1);
          if (p.period_s > 0) period_s = p.period_s;
          if (p.ok) {
            joules.push_back(p.watts * s);
            r.energy_source = p.source + (p.aligned ? "" : " (window edges not aligned)");
          }
        }
        const auto& judged = joules.size() == seconds.size() && !joules.empty() ? joules : seconds;
        // The mean's relative standard error: a window's own spread (~2% for
        // 0.6 s NVML windows) shrinks with the number of windows averaged.
        const double rse = Cv(judged) / std::sqrt(static_cast<double>(judged.size()));
        if (static_cast<int>(judged.size()) >= o.min_repeats && rse <= o.target_rse) {
          converged = true;
          break;
        }
        if (measure_energy) {  // a random phase shift against the sensor's update period
          std::uniform_real_distribution<double> delay(0, period_s);
          std::this_thread::sleep_for(std::chrono::duration<double>(delay(rng)));
        }
      }
      r.energy = !joules.empty() && joules.size() == seconds.size();
      r.m.calls = window_calls;
      r.m.repeats = static_cast<int32_t>(seconds.size());
      if (!seconds.empty()) r.m.seconds_per_call = Mean(seconds);
      r.m.joules_per_call = r.energy ? Mean(joules) : -1;
      r.m.cv = Cv(r.energy ? joules : seconds);
      if (host_only) {
        HostOnlyEnergy(idle, DeviceLabel(e.device), !seconds.empty(), &r);
        if (!energy) r.energy_source = sensors.reason();
        // A valid measurement once the CV can be judged: the time is the only
        // figure and a noisy one is still its best estimate.
        if (r.m.status.empty())
          r.m.status = static_cast<int>(seconds.size()) >= o.min_repeats ? "host" : "budget";
      }
      if (r.m.status.empty()) r.m.status = converged ? "ok" : budget ? "budget" : "noisy";
    } catch (const std::exception& ex) {
      std::string what = ex.what();
      r.m.status = "error";
      r.detail = what.substr(0, what.find('\n'));
    }
  }
  progress.Update(entries.size(), true);
  AddCount(&rep.stats, stats::kReplayOpsSkipped, unsupported);
  AddCount(&rep.stats, stats::kReplayMismatch, mismatches);
  AddCount(&rep.stats, stats::kReplayCudaGraphs, graphs);
  AddCount(&rep.stats, stats::kReplayHostOps, host_ops);
  AddCount(&rep.stats, stats::kReplayCudaGraphFallback, graph_fallbacks);
  return rep;
}

}  // namespace magneton::capture
