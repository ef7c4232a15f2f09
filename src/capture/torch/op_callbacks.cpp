// The RecordFunction callbacks: one Op row per ATen operator call or autograd
// node, tensors in at start, tensors out (and inputs written in place) at end.
#include <ATen/Context.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <c10/util/SmallVector.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "capture/torch/aten_values.h"
#include "capture/torch/recorder_state.h"

namespace magneton::capture {

namespace {

// The recording the callbacks feed. Callbacks hold their own reference, so a
// recording that stops while an op is in flight stays alive until it ends.
std::atomic<std::shared_ptr<RecorderState>> g_state;

struct OpenOp {
  int64_t op;
  int64_t stack;
  int64_t forward_op;
  bool backward;
};
// Ops open on this thread (the nesting stack) for one recording generation.
struct ThreadOps {
  uint64_t generation = 0;
  std::vector<OpenOp> open;
};
// Called once per thread and recording: how CUPTI will name this thread.
void RegisterThread(RecorderState& st, int64_t tid) {
  const auto self = static_cast<uint64_t>(pthread_self());
  std::lock_guard<std::mutex> lock(st.mu);
  st.thread_ids[static_cast<int64_t>(self)] = tid;
  st.thread_ids[static_cast<int64_t>(self & 0xffffffffULL)] = tid;
}
thread_local ThreadOps tl_ops;

int64_t ThreadId() {
  static thread_local int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
  return tid;
}

struct InputRef {
  at::Tensor tensor;
  bool versioned = false;  // inference tensors have no version counter
  uint32_t version = 0;
  size_t arg = 0;          // argument position in the schema
  int64_t storage = kNone; // storage id, once keyed
};

struct OpContext : at::ObserverContext {
  std::shared_ptr<RecorderState> state;
  int64_t id = kNone;
  bool correlated = false;
  const OpSchemaInfo* schema = nullptr;
  c10::SmallVector<InputRef, 4> inputs;
};

bool Version(const at::Tensor& t, uint32_t* version) {
  const auto& vc = t.unsafeGetTensorImpl()->version_counter();
  if (!vc.enabled()) return false;
  *version = vc.current_version();
  return true;
}

// Under state.mu (device ids). False for tensors with no plain layout.
// Tensor::memory. Pinned-ness comes from the accelerator's hooks (no
// dispatcher op, so nothing recorded re-enters these callbacks).
std::string_view MemoryKind(const at::Tensor& t) {
  if (t.is_cpu()) {
    const void* data = t.storage().data();
    return data && at::globalContext().isPinnedPtr(data) ? kMemoryPinned : kMemoryPageable;
  }
  return t.is_meta() ? std::string_view() : kMemoryDevice;
}

bool MakeKey(const at::Tensor& t, RecorderState& st, ValueKey* key) {
  try {
    if (t.is_sparse() || t.is_nested() || !t.has_storage()) return false;
    key->storage = st.StorageId(t.storage());
    key->offset = t.storage_offset();
    uint32_t v = 0;
    key->version = Version(t, &v) ? v : 0;
    key->device = st.DeviceId(t.device());
    key->memory = MemoryKind(t);
    key->dtype = DtypeName(t.scalar_type());
    key->shape.assign(t.sizes().begin(), t.sizes().end());
    key->strides.assign(t.strides().begin(), t.strides().end());
    return true;
  } catch (const std::exception&) {
    return false;  // symbolic sizes, wrapper subclasses
  }
}

// Under state.mu. Schema text and written arguments, cached per operator.
// "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha) -> Tensor",
// without default values. Assembled here from strings rather than with c10's
// operator<<(std::ostream&, FunctionSchema): that has libtorch write into a
// stream built by this module's C++ headers, and on the H200 machine a module
// built with its g++ 13 crashed on the first such write (libtorch's code called
// into this module's copy of the runtime's stream facets). Strings cross the
// boundary safely; streams did not.
std::string SchemaText(const c10::FunctionSchema& schema) {
  std::string text = schema.name();
  if (!schema.overload_name().empty()) text += "." + schema.overload_name();
  text += "(";
  bool kwarg_only = false;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::Argument& a = schema.arguments()[i];
    if (i) text += ", ";
    if (a.kwarg_only() && !kwarg_only) {
      text += "*, ";
      kwarg_only = true;
    }
    text += a.type()->str() + " " + a.name();
  }
  text += ") -> ";
  const auto& returns = schema.returns();
  if (returns.size() != 1) text += "(";
  for (size_t i = 0; i < returns.size(); ++i) text += (i ? ", " : "") + returns[i].type()->str();
  if (returns.size() != 1) text += ")";
  return text;
}

const OpSchemaInfo* SchemaOf(const at::RecordFunction& fn, RecorderState& st) {
  if (fn.scope() != at::RecordScope::FUNCTION) return nullptr;
  const char* name = fn.name();
  auto it = st.schemas.find(name);
  if (it != st.schemas.end() && it->second->name == name) return it->second;
  OpSchemaInfo info;
  info.name = name;
  if (auto schema = fn.operator_schema()) {
    info.schema = SchemaText(*schema);
    for (const auto& a : schema->arguments()) {
      info.writes.push_back(a.alias_info() && a.alias_info()->isWrite());
      info.args.push_back({a.name(), IntArgOf(a)});
    }
  }
  // Entries are never replaced in place: ops recorded earlier point at them.
  st.schema_store.push_back(std::move(info));
  st.schemas[name] = &st.schema_store.back();
  return &st.schema_store.back();
}

// Op::args: the arguments that are not tensors, "name=value, ...".
std::string ArgsText(c10::ArrayRef<const c10::IValue> args, const OpSchemaInfo& info) {
  std::string text;
  for (size_t i = 0; i < args.size() && i < info.args.size(); ++i) {
    const c10::IValue& v = args[i];
    if (v.isNone() || v.isTensor() || v.isTensorList()) continue;
    if (!text.empty()) text += ", ";
    text += info.args[i].name + "=" + ScalarText(v, info.args[i].meaning);
  }
  return text;
}

// The fingerprints' own kernels carry kRecorderWork instead of an op id, so
// that a recording pass's op-to-kernel links hold the program's kernels only;
// the scope's span is kept for kernels launched from other threads meanwhile
// (RecorderState::recorder_work).
class RecorderWorkScope {
 public:
  explicit RecorderWorkScope(RecorderState& st) : st_(st), start_(MonotonicNs()) {
    if (st_.kernels) st_.kernels->Push(static_cast<uint64_t>(kRecorderWork));
  }
  ~RecorderWorkScope() {
    if (!st_.kernels) return;
    st_.kernels->Pop();
    std::lock_guard<std::mutex> lock(st_.work_mu);
    st_.recorder_work.emplace_back(start_, MonotonicNs());
  }
  RecorderWorkScope(const RecorderWorkScope&) = delete;
  RecorderWorkScope& operator=(const RecorderWorkScope&) = delete;

 private:
  RecorderState& st_;
  const int64_t start_;
  PythonWaitSites::OwnWork own_waits_;
};

// Fingerprints `todo` (tensor row, value) outside the lock and stores them.
void FingerprintRows(RecorderState& st, std::vector<std::pair<int64_t, at::Tensor>>& todo) {
  std::vector<std::pair<int64_t, Result<Fingerprint>>> done;
  done.reserve(todo.size());
  RecorderWorkScope scope(st);
  for (auto& [row, t] : todo) done.emplace_back(row, ComputeFingerprint(t, st.options.fingerprint));
  std::lock_guard<std::mutex> lock(st.mu);
  for (auto& [row, fp] : done) {
    if (fp.ok()) {
      st.dataflow.row(row).fingerprint = std::move(fp.value());
      ++st.summary.fingerprints;
    } else {
      ++st.summary.fingerprint_failures;
    }
  }
}

// The op's tensor inputs with their versions at start: a version that moved
// by the end marks an input written in place.
void CollectInputs(c10::ArrayRef<const c10::IValue> args, OpContext* ctx) {
  for (size_t i = 0; i < args.size(); ++i) {
    ForEachTensor(args[i], [&](const at::Tensor& t) {
      InputRef in;
      in.tensor = t;
      in.versioned = Version(t, &in.version);
      in.arg = i;
      ctx->inputs.push_back(std::move(in));
    });
  }
}

// Under state.mu: the forward op an op of the backward pass belongs to, and
// for a forward op, its sequence number for the autograd node to find it.
void LinkForward(const at::RecordFunction& fn, RecorderState& st, const OpenOp* parent, bool in_backward, Op* op) {
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
    auto it = st.forward_by_seq.find(SeqKey(fn.forwardThreadId(), fn.seqNr()));
    if (it != st.forward_by_seq.end()) op->forward_op = it->second;
    // The engine wraps each node in "autograd::engine::evaluate_function: X".
    if (parent) {  // still running, so still held
      Op& wrapper = st.ops.at(parent->op).op;
      if (wrapper.forward_op == kNone) wrapper.forward_op = op->forward_op;
    }
  } else if (in_backward) {
    op->forward_op = parent->forward_op;
  } else if (fn.seqNr() >= 0) {
    // The autograd node takes the sequence number of the last op that saw it.
    st.forward_by_seq[SeqKey(fn.threadId(), fn.seqNr())] = op->id;
  }
}

// Under state.mu: each input's dataflow row. Graph inputs and aliased reads
// go to `fresh`, to be fingerprinted outside the lock.
void KeyInputs(RecorderState& st, OpContext& ctx, Op* op, std::vector<std::pair<int64_t, at::Tensor>>* fresh) {
  for (auto& in : ctx.inputs) {
    ValueKey key;
    if (!MakeKey(in.tensor, st, &key)) {
      ++st.summary.skipped_tensors;
      continue;
    }
    in.storage = key.storage;
    const Dataflow::InputRow row = st.dataflow.Input(key);
    op->inputs.push_back(row.row);
    if (row.aliased_writer != kNone) {
      // The writer's row may be written already: the edge is then lost, and counted.
      if (st.ops.held(row.aliased_writer))
        st.ops.at(row.aliased_writer).op.outputs.push_back(row.row);
      else
        ++st.summary.aliased_inputs_unlinked;
    }
    if (op->device == kHostDevice) op->device = key.device;
    if (st.fingerprinting.load(std::memory_order_relaxed) && (row.graph_input || row.aliased_writer != kNone))
      fresh->emplace_back(row.row, in.tensor);
  }
}

std::unique_ptr<at::ObserverContext> RecordOpStart(const at::RecordFunction& fn) {
  std::shared_ptr<RecorderState> st = g_state.load(std::memory_order_acquire);
  if (!st || !st->active.load(std::memory_order_relaxed)) return nullptr;
  const int64_t start = MonotonicNs();
  if (tl_ops.generation != st->generation) {
    tl_ops.open.clear();
    tl_ops.generation = st->generation;
    RegisterThread(*st, ThreadId());
  }
  const OpenOp* parent = tl_ops.open.empty() ? nullptr : &tl_ops.open.back();
  // Nested ops share their top-level op's call site; only top-level ops walk Python.
  const int64_t stack = parent ? parent->stack : (st->options.stacks ? st->stacks.Capture() : kNone);
  const bool in_backward = fn.scope() == at::RecordScope::BACKWARD_FUNCTION || (parent && parent->backward);

  auto ctx = std::make_unique<OpContext>();
  ctx->state = st;
  const auto args = fn.inputs();
  CollectInputs(args, ctx.get());

  std::vector<std::pair<int64_t, at::Tensor>> fresh;  // graph inputs to fingerprint
  Op op;
  int64_t forward_op = kNone;
  {
    std::lock_guard<std::mutex> lock(st->mu);
    const int64_t first_new_tensor = st->dataflow.rows();
    op.id = st->ops.size();
    op.parent = parent ? parent->op : kNone;
    ctx->schema = SchemaOf(fn, *st);
    if (!ctx->schema) op.name = fn.name();  // dispatcher ops get theirs at Stop
    else op.args = ArgsText(args, *ctx->schema);
    op.framework = "torch";
    op.sequence = fn.seqNr() >= 0 ? fn.seqNr() : kNone;
    op.thread = ThreadId();
    op.start_ns = start;
    op.stack = stack;
    LinkForward(fn, *st, parent, in_backward, &op);
    KeyInputs(*st, *ctx, &op, &fresh);
    ctx->id = op.id;
    forward_op = op.forward_op;
    if (st->launches) st->spans.push_back({op.parent, op.thread, op.start_ns, 0});
    st->open_ops.insert(op.id);
    st->ops.push({std::move(op), ctx->schema, first_new_tensor});
  }
  if (!fresh.empty()) FingerprintRows(*st, fresh);
  tl_ops.open.push_back({ctx->id, stack, forward_op, in_backward});
  if (st->kernels) {
    st->kernels->Push(static_cast<uint64_t>(ctx->id));
    ctx->correlated = true;
  }
  return ctx;
}

// Under state.mu: the op has ended. Null when its row was already written
// (the recording stopped while it ran).
Op* CloseOp(RecorderState& st, int64_t id, int64_t end) {
  st.open_ops.erase(id);
  if (st.launches && id < static_cast<int64_t>(st.spans.size())) st.spans[id].end_ns = end;
  if (!st.ops.held(id)) return nullptr;
  Op& op = st.ops.at(id).op;
  op.end_ns = end;
  return &op;
}

// One tensor an op produced (or wrote in place), on its way to a row.
struct OutputValue {
  explicit OutputValue(const at::Tensor& t) : tensor(t) {}
  at::Tensor tensor;
  bool usable = false;  // has a plain layout (MakeKey succeeded)
  bool writes = true;   // wrote its storage, rather than viewing an input's
  ValueKey key;
  std::optional<Fingerprint> fingerprint;
};

// Under state.mu: keys and write flags. Fingerprints are not taken over from
// a nested op that produced the same key: kernels (BLAS, layer norm) write
// their output without moving the version counter, so a nested op's row
// (addmm's bias copy_) can carry the key of the outer op's final value while
// holding an earlier value. Each output is fingerprinted at the end of the
// op that returns it.
void KeyOutputs(RecorderState& st, c10::SmallVector<OutputValue, 4>& outs,
                const c10::SmallVector<int64_t, 8>& viewed, const c10::SmallVector<int64_t, 8>& written) {
  auto has = [](const c10::SmallVector<int64_t, 8>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  for (auto& o : outs) {
    o.usable = MakeKey(o.tensor, st, &o.key);
    if (!o.usable) {
      ++st.summary.skipped_tensors;
      continue;
    }
    // Same storage as an input the op left alone: a view (x.view(...)),
    // unless the op also wrote that storage (x.add_(1) returns x).
    if (has(viewed, o.key.storage) && !has(written, o.key.storage)) o.writes = false;
  }
}

void RecordOpEnd(const at::RecordFunction& fn, at::ObserverContext* base) {
  auto* ctx = static_cast<OpContext*>(base);
  if (!ctx) return;
  RecorderState& st = *ctx->state;
  const int64_t end = MonotonicNs();
  if (ctx->correlated) st.kernels->Pop();
  auto& open = tl_ops.open;
  for (size_t i = open.size(); i-- > 0;)
    if (open[i].op == ctx->id) {
      open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  if (!st.active.load(std::memory_order_relaxed)) {  // paused or stopped: close it, record nothing more
    std::lock_guard<std::mutex> lock(st.mu);
    CloseOp(st, ctx->id, end);
    return;
  }

  c10::SmallVector<OutputValue, 4> outs;
  for (const auto& v : fn.outputs()) ForEachTensor(v, [&](const at::Tensor& t) { outs.emplace_back(t); });
  // Written inputs: the version counter moved, or the schema marks the
  // argument as written: inference tensors have no counter, and fused
  // optimizers (_fused_adam_) write their lists without moving it.
  c10::SmallVector<int64_t, 8> viewed, written;  // storages of inputs the op left alone / wrote
  for (const auto& in : ctx->inputs) {
    uint32_t now = 0;
    const bool wrote = (in.versioned && Version(in.tensor, &now) && now != in.version) ||
                       (ctx->schema && in.arg < ctx->schema->writes.size() && ctx->schema->writes[in.arg]);
    (wrote ? written : viewed).push_back(in.storage);
    if (!wrote) continue;
    bool returned = false;
    for (const auto& o : outs) returned |= o.tensor.unsafeGetTensorImpl() == in.tensor.unsafeGetTensorImpl();
    if (!returned) outs.emplace_back(in.tensor);  // out= arguments, foreach ops
  }

  std::unique_lock<std::mutex> lock(st.mu);
  KeyOutputs(st, outs, viewed, written);
  const bool fingerprinting = st.fingerprinting.load(std::memory_order_relaxed);
  if (fingerprinting) {  // the recording pass: compute outside the lock
    lock.unlock();
    RecorderWorkScope scope(st);
    for (auto& o : outs) {
      if (!o.usable) continue;
      auto fp = ComputeFingerprint(o.tensor, st.options.fingerprint);
      if (fp.ok()) o.fingerprint = std::move(fp.value());
    }
    lock.lock();
  }
  Op* closed = CloseOp(st, ctx->id, end);
  if (!closed) return;  // written at stop while it ran
  Op& op = *closed;
  for (auto& o : outs) {
    if (!o.usable) continue;
    const int64_t row = st.dataflow.Output(o.key, ctx->id, o.writes);
    if (o.fingerprint) {
      st.dataflow.row(row).fingerprint = std::move(o.fingerprint);
      ++st.summary.fingerprints;
    } else if (fingerprinting) {
      ++st.summary.fingerprint_failures;
    }
    op.outputs.push_back(row);
    if (op.device == kHostDevice) op.device = o.key.device;
  }
  const bool backlog = open.empty() && st.ops.size() - st.ops.written() > kMaxHeldOps;
  if (backlog) ++st.summary.store_waits;
  lock.unlock();
  if (backlog) WaitForFlush(st);
}

// A recorder bug must not reach the workload: callbacks run inside its ops,
// and an exception from one would fail the op. Count it and go on.
void CountError() {
  if (auto st = g_state.load()) st->callback_errors.fetch_add(1);
}

std::unique_ptr<at::ObserverContext> OnOpStart(const at::RecordFunction& fn) {
  try {
    return RecordOpStart(fn);
  } catch (...) {
    CountError();
    return nullptr;
  }
}

void OnOpEnd(const at::RecordFunction& fn, at::ObserverContext* base) {
  try {
    RecordOpEnd(fn, base);
  } catch (...) {
    CountError();
  }
}

}  // namespace

int64_t RecorderState::StorageId(const c10::Storage& s) {
  const c10::StorageImpl* impl = s.unsafeGetStorageImpl();
  auto it = storage_ids.find(impl);
  if (it != storage_ids.end()) return it->second.id;
  if (storage_ids.size() >= sweep_at) ForgetDeadStorages();
  const int64_t id = next_storage++;
  storage_ids.emplace(impl, StorageEntry{id, s.getWeakStorageImpl()});
  return id;
}

void RecorderState::ForgetDeadStorages() {
  for (auto it = storage_ids.begin(); it != storage_ids.end();) {
    if (it->second.ref.expired()) {
      dataflow.ForgetStorage(it->second.id);
      it = storage_ids.erase(it);
    } else {
      ++it;
    }
  }
  sweep_at = 2 * storage_ids.size() + kSweepFloor;  // amortized O(1) per new storage
}

// A forked child (DataLoader workers) inherits the callbacks; its ops would go
// to a copy of the recording that is never written, so it records nothing.
void StopRecordingInChild() {
  if (auto st = g_state.load()) st->active.store(false);
}

Status ClaimRecording(const std::shared_ptr<RecorderState>& state) {
  static const bool fork_handler = pthread_atfork(nullptr, nullptr, &StopRecordingInChild) == 0;
  (void)fork_handler;
  std::shared_ptr<RecorderState> expected;
  if (!g_state.compare_exchange_strong(expected, state))
    return MakeError(ErrorCode::kInvalidArgument,
                     "magneton.record: a recording is already active in this process");
  return Status::Ok();
}

void ReleaseRecording(const std::shared_ptr<RecorderState>& state) {
  SetOpCallbacks(*state, false);
  SetOpCounting(*state, false);
  state->active.store(false);
  std::shared_ptr<RecorderState> expected = state;
  g_state.compare_exchange_strong(expected, nullptr);
}

namespace {

// Operators that only make, fill, move or view data: what a loop building a
// dataset runs (randint, ones_like, .to(device), stack). They are not counted,
// so a set-up loop of a few tensors per iteration is not taken for the step.
bool MakesOrMovesData(std::string_view name) {
  static const std::unordered_set<std::string_view> kData = {
      "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::zeros", "aten::zeros_like",
      "aten::ones", "aten::ones_like", "aten::full", "aten::full_like", "aten::rand", "aten::rand_like",
      "aten::randn", "aten::randn_like", "aten::randint", "aten::randint_like", "aten::randperm",
      "aten::arange", "aten::linspace", "aten::normal_", "aten::uniform_", "aten::random_",
      "aten::bernoulli_", "aten::fill_", "aten::zero_", "aten::lift_fresh", "aten::lift_fresh_copy",
      "aten::scalar_tensor", "aten::to", "aten::_to_copy", "aten::copy_", "aten::detach", "aten::alias",
      "aten::stack", "aten::cat", "aten::clone", "aten::resize_", "aten::as_strided", "aten::view",
      "aten::reshape", "aten::unsqueeze", "aten::squeeze", "aten::select", "aten::slice", "aten::expand",
      "aten::_unsafe_view", "aten::pin_memory", "aten::_pin_memory", "aten::set_"};
  return kData.count(name) != 0;
}

// Counts operator calls that compute, without recording them (SetOpCounting).
std::atomic<int64_t> g_counted{0};
std::unique_ptr<at::ObserverContext> CountOp(const at::RecordFunction& fn) {
  if (!MakesOrMovesData(fn.name())) g_counted.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace

void SetOpCounting(RecorderState& state, bool on) {
  if (on == (state.counting != 0)) return;
  if (!on) {
    at::removeCallback(state.counting);
    state.counting = 0;
    return;
  }
  at::RecordFunctionCallback cb(&CountOp);
  cb.scopes({at::RecordScope::FUNCTION});
  state.counting = at::addGlobalCallback(cb);
}

int64_t CountedOps() { return g_counted.load(std::memory_order_relaxed); }

void SetOpCallbacks(RecorderState& state, bool on) {
  state.active.store(on);
  if (on == state.observer.installed()) return;
  if (on)
    state.observer = AddOpObserver(&OnOpStart, &OnOpEnd);
  else
    RemoveOpObserver(state.observer);
}

}  // namespace magneton::capture
