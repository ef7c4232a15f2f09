// Operator replay's capture: a RecordFunction callback that keeps the inputs
// (cloned, on their device) of the first call of each selected operator key.
// docs/energy.md, "Replay".
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>

#include <atomic>
#include <mutex>

#include "capture/torch/aten_values.h"
#include "capture/torch/op_observer.h"
#include "capture/torch/replay.h"
#include "capture/torch/replay_call.h"
#include "core/op_signature.h"
#include "energy/clock.h"

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

thread_local int tl_depth = 0;

}  // namespace

struct ReplayCapture::State {
  ReplaySelection selection;
  FingerprintOptions fingerprint;
  std::atomic<bool> active{false};
  std::atomic<int64_t> ordinal{0};
  OpObserver observer;
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

// A call's signature (core/op_signature.h), key and device.
struct CallKey {
  std::string signature, key;
  c10::Device device = c10::Device(c10::kCPU);
};

CallKey KeyOf(const std::string& name, c10::ArrayRef<const c10::IValue> inputs) {
  CallKey k;
  std::string strides, scalars;
  k.signature = name + "(";
  bool have_device = false;
  bool first = true;
  for (const auto& input : inputs) {
    bool tensors = false;
    ForEachTensor(input, [&](const at::Tensor& t) {
      tensors = true;
      if (!Keyable(t)) return;
      k.signature += (first ? "" : ",") + SignatureInput(DtypeName(t.scalar_type()), {t.sizes().data(), t.sizes().size()});
      strides += (first ? "[" : ",[") + Join(t.strides(), ",") + "]";
      first = false;
      if (!have_device) k.device = t.device(), have_device = true;
    });
    if (!tensors) {
      scalars += (scalars.empty() ? "" : ",") + ScalarText(input);
      if (input.isDevice() && !have_device) k.device = input.toDevice(), have_device = true;
    }
  }
  k.signature += ")";
  k.key = k.signature + " strides " + strides + " args [" + scalars + "] @" + k.device.str();
  return k;
}

bool Selected(const ReplaySelection& sel, const std::string& name, const std::string& signature, bool top_level) {
  return sel.all || sel.signatures.count(signature) || (sel.names.count(name) && (!sel.top_level_only || top_level));
}

// The entry of a first call: what the schema says of it, and its cloned inputs.
std::shared_ptr<ReplayEntry> NewEntry(const c10::FunctionSchema& schema, CallKey k,
                                      c10::ArrayRef<const c10::IValue> inputs, int64_t ordinal, bool top_level) {
  auto e = std::make_shared<ReplayEntry>();
  e->key = std::move(k.key);
  e->signature = std::move(k.signature);
  e->name = schema.name();
  e->overload = schema.overload_name();
  e->ordinal = ordinal;
  e->top_level = top_level;
  e->device = k.device;
  for (const auto& a : schema.arguments()) e->writes.push_back(a.alias_info() && a.alias_info()->isWrite());
  e->random = RandomOp(schema);
  e->uninitialized = UninitializedOp(e->name);
  if (HostSyncOps().count(e->name)) e->unsupported = "synchronizes with the host";
  for (const auto& v : inputs)
    if (v.isObject() || v.isCapsule() || v.isFuture() || v.isPyObject() || v.isRRef() || v.isStream())
      e->unsupported = std::string("argument of kind ") + v.tagKind();
  if (!e->unsupported.empty()) return e;
  c10::NoGradGuard no_grad;
  at::RecordFunctionGuard no_record(false);
  Cloner cloner;
  for (const auto& v : inputs) e->args.push_back(cloner.Value(v));
  if (e->random) e->rng_state = GeneratorState(e->device);
  return e;
}

std::shared_ptr<ReplayEntry> MaybeCapture(const at::RecordFunction& fn, ReplayCapture::State& st, int64_t ordinal,
                                          bool top_level) {
  if (fn.scope() != at::RecordScope::FUNCTION) return nullptr;
  auto schema = fn.operator_schema();
  if (!schema) return nullptr;
  const std::string name = fn.name();
  const auto inputs = fn.inputs();
  CallKey k = KeyOf(name, inputs);
  if (!Selected(st.selection, name, k.signature, top_level)) return nullptr;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (!st.keys.insert(k.key).second) return nullptr;
  }
  auto e = NewEntry(*schema, std::move(k), inputs, ordinal, top_level);
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
  st->observer = AddOpObserver(&CaptureStart, &CaptureEnd);
  return std::unique_ptr<ReplayCapture>(new ReplayCapture(st));
}

ReplayCapture::~ReplayCapture() { Stop(); }

void ReplayCapture::Stop() {
  RemoveOpObserver(state_->observer);
  state_->active.store(false);
  std::shared_ptr<State> expected = state_;
  g_capture.compare_exchange_strong(expected, nullptr);
}

std::vector<std::shared_ptr<ReplayEntry>> ReplayCapture::entries() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->entries;
}

int64_t ReplayCapture::seen() const { return state_->ordinal.load(); }

}  // namespace magneton::capture
