#include "capture/torch/python_wait_sites.h"

#include <vector>

namespace magneton::capture {
namespace {

thread_local std::vector<uint32_t> t_waiting;  // this thread's calls whose stack is not read yet
thread_local int t_own_work = 0;

// Entries never asked for (a call whose row was not written) are dropped
// beyond this many.
constexpr size_t kMaxUnread = 1 << 16;

}  // namespace

PythonWaitSites::OwnWork::OwnWork() { ++t_own_work; }
PythonWaitSites::OwnWork::~OwnWork() { --t_own_work; }

PythonWaitSites::~PythonWaitSites() { Watch(false); }

void PythonWaitSites::SetProfile(PyObject* capsule) {
  Py_tracefunc func = capsule ? &PythonWaitSites::Profile : nullptr;
#if PY_VERSION_HEX >= 0x030C0000
  PyEval_SetProfileAllThreads(func, capsule);
#else
  PyEval_SetProfile(func, capsule);  // the calling thread's only
#endif
}

bool PythonWaitSites::Watch(bool on) {
  if (on == watching_.load() || !Py_IsInitialized()) return true;
  PyGILState_STATE g = PyGILState_Ensure();
  bool ok = true;
  if (!on) {
    watching_.store(false);
    // A profiler the program set since (torch.profiler's stacks) is not ours to remove.
    if (PyThreadState_Get()->c_profilefunc == &PythonWaitSites::Profile) SetProfile(nullptr);
  } else if (PyThreadState_Get()->c_profilefunc != nullptr) {
    ok = false;  // sys.setprofile or another profiler: not ours to replace
  } else if (PyObject* capsule = PyCapsule_New(this, nullptr, nullptr)) {
    SetProfile(capsule);  // the interpreter holds its own reference
    Py_DECREF(capsule);
    watching_.store(true);
  } else {
    PyErr_Clear();
    ok = false;
  }
  PyGILState_Release(g);
  return ok;
}

void PythonWaitSites::Entered(uint32_t correlation) {
  // A thread without a Python thread state (a library's worker) never
  // returns to Python: its waits would wait for a stack forever.
  if (!watching_.load(std::memory_order_relaxed) || t_own_work > 0 || PyGILState_GetThisThreadState() == nullptr)
    return;
  t_waiting.push_back(correlation);
}

int PythonWaitSites::Profile(PyObject* self, PyFrameObject*, int what, PyObject*) {
  if (t_waiting.empty()) return 0;
  // The builtin that waited (or the function around it) is returning: the
  // frames above it are the program's call site.
  if (what != PyTrace_C_RETURN && what != PyTrace_C_EXCEPTION && what != PyTrace_RETURN) return 0;
  auto* sites = static_cast<PythonWaitSites*>(PyCapsule_GetPointer(self, nullptr));
  if (!sites) {
    PyErr_Clear();
    return 0;
  }
  const int64_t stack = sites->stacks_->Capture();
  std::lock_guard<std::mutex> lock(sites->mu_);
  if (sites->stack_by_call_.size() > kMaxUnread) sites->stack_by_call_.clear();
  for (uint32_t c : t_waiting) sites->stack_by_call_[c] = stack;
  t_waiting.clear();
  return 0;
}

int64_t PythonWaitSites::StackOf(uint32_t correlation) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stack_by_call_.find(correlation);
  if (it == stack_by_call_.end()) return kNone;
  const int64_t stack = it->second;
  stack_by_call_.erase(it);
  return stack;
}

}  // namespace magneton::capture
