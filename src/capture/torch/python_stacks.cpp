#include "capture/torch/python_stacks.h"

namespace magneton::capture {

namespace {
std::string Utf8(PyObject* s) {
  if (!s || !PyUnicode_Check(s)) return {};
  const char* c = PyUnicode_AsUTF8(s);
  return c ? c : "";
}
}  // namespace

size_t PythonStacks::VecHash::operator()(const std::vector<int64_t>& v) const noexcept {
  size_t h = v.size();
  for (auto x : v) h ^= static_cast<size_t>(x) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

PythonStacks::~PythonStacks() {
  if (frame_ids_.empty() || !Py_IsInitialized()) return;
  PyGILState_STATE g = PyGILState_Ensure();
  for (auto& [key, id] : frame_ids_) Py_DECREF(reinterpret_cast<PyObject*>(key.first));
  PyGILState_Release(g);
}

int64_t PythonStacks::Capture() {
  if (!Py_IsInitialized()) return kNone;
  if (PyGILState_Check()) return CaptureWithGil();
  // No thread state: a thread Python never ran on (autograd engine, ATen pool).
  if (PyGILState_GetThisThreadState() == nullptr) return kNone;
  PyGILState_STATE g = PyGILState_Ensure();
  int64_t id = CaptureWithGil();
  PyGILState_Release(g);
  return id;
}

// Called with the GIL held and mu_ (the destructor and readers do not hold
// the GIL).
int64_t PythonStacks::FrameId(PyCodeObject* code, int line) {
  auto key = std::make_pair(code, line);
  auto it = frame_ids_.find(key);
  if (it != frame_ids_.end()) return it->second;
  Py_INCREF(reinterpret_cast<PyObject*>(code));
  Frame f;
  f.id = static_cast<int64_t>(frames_.size());
  f.kind = "python";
  f.function = Utf8(code->co_qualname);
  f.file = Utf8(code->co_filename);
  f.line = line;
  frames_.push_back(std::move(f));
  frame_ids_.emplace(key, frames_.back().id);
  return frames_.back().id;
}

// With the GIL held; takes mu_ (no Python code runs under it).
int64_t PythonStacks::FrameAt(PyFrameObject* frame, PyCodeObject* code) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(code, PyFrame_GetLasti(frame));
  auto it = instr_ids_.find(key);
  if (it != instr_ids_.end()) return it->second;
  const int64_t id = FrameId(code, PyFrame_GetLineNumber(frame));
  instr_ids_.emplace(key, id);
  return id;
}

int64_t PythonStacks::CaptureWithGil() {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (!frame) return kNone;
  std::vector<int64_t> ids;
  Py_INCREF(frame);
  while (frame && static_cast<int>(ids.size()) < max_depth_) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference; FrameId keeps its own
    ids.push_back(FrameAt(frame, code));
    Py_DECREF(reinterpret_cast<PyObject*>(code));
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stack_ids_.find(ids);
  if (it != stack_ids_.end()) return it->second;
  Stack s;
  s.id = static_cast<int64_t>(stacks_.size());
  s.frames = ids;
  stacks_.push_back(std::move(s));
  stack_ids_.emplace(std::move(ids), stacks_.back().id);
  return stacks_.back().id;
}

void PythonStacks::TakeNew(std::vector<Frame>* frames, std::vector<Stack>* stacks) {
  std::lock_guard<std::mutex> lock(mu_);
  frames->insert(frames->end(), frames_.begin() + static_cast<std::ptrdiff_t>(frames_taken_), frames_.end());
  stacks->insert(stacks->end(), stacks_.begin() + static_cast<std::ptrdiff_t>(stacks_taken_), stacks_.end());
  frames_taken_ = frames_.size();
  stacks_taken_ = stacks_.size();
}

int64_t PythonStacks::frame_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(frames_.size());
}

int64_t PythonStacks::stack_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(stacks_.size());
}

}  // namespace magneton::capture
