#include "analysis/diff/pass_align.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <iterator>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/diff/step_align.h"

namespace magneton::analysis {

std::vector<DeviceWork> DeviceWorkInLaunchOrder(const Run& run) {
  std::vector<DeviceWork> out;
  for (const auto& k : run.kernels)
    if (k.op != kRecorderWork) out.push_back({true, k.id});
  for (const auto& t : run.transfers)
    if (t.op != kRecorderWork && t.kind != "sync") out.push_back({false, t.id});
  auto key = [&](const DeviceWork& w) {
    return w.kernel ? std::tuple{run.kernels[w.id].correlation, run.kernels[w.id].start_ns, 0}
                    : std::tuple{run.transfers[w.id].correlation, run.transfers[w.id].start_ns, 1};
  };
  std::stable_sort(out.begin(), out.end(), [&](const DeviceWork& x, const DeviceWork& y) { return key(x) < key(y); });
  return out;
}

std::string DeviceWorkKey(const Run& run, const DeviceWork& w, bool shapes) {
  if (!w.kernel) {
    const Transfer& t = run.transfers[w.id];
    return shapes ? fmt::format("{}|{}", t.kind, t.bytes) : t.kind;
  }
  const Kernel& k = run.kernels[w.id];
  if (!shapes) {  // the kernel's family: a GEMM library picks other tile sizes as the sizes grow
    std::string family;
    std::copy_if(k.name.begin(), k.name.end(), std::back_inserter(family), [](char c) { return !std::isdigit(c); });
    return family;
  }
  return fmt::format("{}|{}x{}x{}|{}x{}x{}", k.name, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2]);
}

std::string MostUnaligned(const PassAlignment& al, size_t n) {
  std::vector<std::pair<int64_t, std::string>> names;
  for (const auto& [name, count] : al.unaligned_names) names.emplace_back(count, name);
  std::sort(names.rbegin(), names.rend());
  std::vector<std::string> top;
  for (size_t i = 0; i < names.size() && i < n; ++i)
    top.push_back(fmt::format("{} x{}", names[i].second, names[i].first));
  return fmt::format("{}", fmt::join(top, ", "));
}

namespace {

// Strings to small integers, shared by both passes so equal keys compare equal.
class Tokens {
 public:
  int operator()(const std::string& key) {
    return ids_.emplace(key, static_cast<int>(ids_.size())).first->second;
  }

 private:
  std::unordered_map<std::string, int> ids_;
};

void CountOutside(const StepAlignment& s, PassAlignment& out, const std::vector<std::string>& names) {
  for (size_t j = 0; j < s.recorded_of.size(); ++j) {
    if (s.repetition_of[j] < 0) {
      ++out.outside;
    } else if (s.recorded_of[j] < 0) {
      ++out.unaligned;
      ++out.unaligned_names[names[j]];
    } else {
      ++out.aligned;
    }
  }
  out.repeats = static_cast<int64_t>(s.repetitions.size());
  for (const auto& r : s.repetitions) out.exact += r.exact;
  out.step_items = s.step_end - s.step_begin;
  out.recording_steps = s.recording_steps;
}

// The number of distinct matched regions the ops at recorded positions [begin, end) lie in.
StepPreference ByRegions(const std::vector<int32_t>* region_of_op, std::function<int64_t(int64_t)> op_at) {
  if (!region_of_op) return nullptr;
  return [region_of_op, op_at = std::move(op_at)](int64_t begin, int64_t end) {
    std::set<int32_t> regions;
    for (int64_t i = begin; i < end; ++i)
      if (const int64_t op = op_at(i); op >= 0 && op < static_cast<int64_t>(region_of_op->size()))
        if (const int32_t r = (*region_of_op)[static_cast<size_t>(op)]; r >= 0) regions.insert(r);
    return static_cast<int64_t>(regions.size());
  };
}

Result<PassAlignment> ByOperators(const Run& recorded, const Run& measured, const std::vector<int32_t>* region_of_op,
                                  bool shapes) {
  Tokens tokens;
  std::vector<int> rec, mea;
  std::vector<std::string> names;
  auto key = [&](const Run& run, const Op& op) { return shapes ? OpSignature(run, op) : op.name; };
  for (const auto& op : recorded.ops) rec.push_back(tokens(key(recorded, op)));
  for (const auto& op : measured.ops) {
    mea.push_back(tokens(key(measured, op)));
    names.push_back(op.name);
  }
  auto steps = AlignSteps(rec, mea, "operators", WholeScript(recorded),
                          ByRegions(region_of_op, [](int64_t i) { return i; }));
  if (!steps.ok()) return steps.error();
  PassAlignment out;
  CountOutside(*steps, out, names);
  out.measured_ops.assign(recorded.ops.size(), std::vector<int64_t>(out.repeats, kNone));
  out.op_rep = steps->repetition_of;
  std::vector<int64_t> recorded_op(measured.ops.size(), kNone);
  for (size_t m = 0; m < measured.ops.size(); ++m)
    if (int64_t r = steps->recorded_of[m]; r >= 0 && steps->repetition_of[m] >= 0) {
      out.measured_ops[r][steps->repetition_of[m]] = static_cast<int64_t>(m);
      recorded_op[m] = r;
    }
  // Device work of a measured op belongs to its recorded counterpart.
  auto place = [&](int64_t op, int32_t* rep, int64_t* rec_op) {
    *rep = -1;
    *rec_op = kNone;
    if (op < 0 || op >= static_cast<int64_t>(measured.ops.size())) return;
    *rep = out.op_rep[op];
    *rec_op = recorded_op[op];
  };
  out.kernel_rep.resize(measured.kernels.size());
  out.kernel_op.resize(measured.kernels.size());
  for (size_t k = 0; k < measured.kernels.size(); ++k)
    place(measured.kernels[k].op, &out.kernel_rep[k], &out.kernel_op[k]);
  out.transfer_rep.resize(measured.transfers.size());
  out.transfer_op.resize(measured.transfers.size());
  for (size_t t = 0; t < measured.transfers.size(); ++t) {
    place(measured.transfers[t].op, &out.transfer_rep[t], &out.transfer_op[t]);
    if (measured.transfers[t].kind == "sync") out.transfer_rep[t] = -1;
  }
  return out;
}

Result<PassAlignment> ByDeviceWork(const Run& recorded, const Run& measured,
                                   const std::vector<int32_t>* region_of_op, bool shapes) {
  std::vector<DeviceWork> rec_work = DeviceWorkInLaunchOrder(recorded), mea_work = DeviceWorkInLaunchOrder(measured);
  if (rec_work.empty())
    return MakeError(ErrorCode::kInvalidArgument,
                     "its measured pass recorded no operators, so its kernels are matched to the recording pass's, "
                     "but the recording pass holds no kernels (recorded with kernels off, or by a Magneton that "
                     "traced none there): record the recording pass again");
  Tokens tokens;
  std::vector<int> rec, mea;
  std::vector<std::string> names;
  for (const auto& w : rec_work) rec.push_back(tokens(DeviceWorkKey(recorded, w, shapes)));
  for (const auto& w : mea_work) {
    mea.push_back(tokens(DeviceWorkKey(measured, w, shapes)));
    names.push_back(w.kernel ? measured.kernels[w.id].name : "copy " + measured.transfers[w.id].kind);
  }
  auto op_at = [&](int64_t i) {
    const DeviceWork& w = rec_work[static_cast<size_t>(i)];
    return w.kernel ? recorded.kernels[w.id].op : recorded.transfers[w.id].op;
  };
  auto steps = AlignSteps(rec, mea, "kernels and copies", WholeScript(recorded), ByRegions(region_of_op, op_at));
  if (!steps.ok()) return steps.error();
  PassAlignment out;
  out.by_device_work = true;
  CountOutside(*steps, out, names);
  out.kernel_rep.assign(measured.kernels.size(), -1);
  out.kernel_op.assign(measured.kernels.size(), kNone);
  out.transfer_rep.assign(measured.transfers.size(), -1);
  out.transfer_op.assign(measured.transfers.size(), kNone);
  for (size_t j = 0; j < mea_work.size(); ++j) {
    const DeviceWork& w = mea_work[j];
    int64_t op = kNone;
    if (int64_t i = steps->recorded_of[j]; i >= 0) {
      const DeviceWork& r = rec_work[i];
      op = r.kernel ? recorded.kernels[r.id].op : recorded.transfers[r.id].op;
    }
    (w.kernel ? out.kernel_rep : out.transfer_rep)[w.id] = steps->repetition_of[j];
    (w.kernel ? out.kernel_op : out.transfer_op)[w.id] = op;
  }
  return out;
}

}  // namespace

// Of the measured items inside repetitions, at most this share may align with
// nothing recorded before alignment by names is tried.
constexpr double kMostlyAligned = 0.01;

Result<PassAlignment> AlignPasses(const Run& recorded, const Run& measured, const std::vector<int32_t>* region_of_op) {
  // A measured pass with operators aligns by them; only kernels, by the device work.
  bool measured_has_ops = std::any_of(measured.ops.begin(), measured.ops.end(),
                                      [](const Op& op) { return op.framework != "nvtx"; });
  auto align = [&](bool shapes) {
    return measured_has_ops ? ByOperators(recorded, measured, region_of_op, shapes)
                            : ByDeviceWork(recorded, measured, region_of_op, shapes);
  };
  auto exact = align(true);
  // A step whose shapes change from one iteration to the next (decoding over a
  // growing sequence) repeats its operators or kernels, not their shapes; so
  // does one with a part whose shapes change (a result grown by torch.cat at
  // every step), whose exact alignment leaves that part of every repetition
  // aligned with nothing.
  if (exact.ok() && exact->unaligned <= kMostlyAligned * (exact->unaligned + exact->aligned)) return exact;
  auto by_names = align(false);
  if (!by_names.ok()) return exact.ok() ? exact : Result<PassAlignment>(exact.error());
  if (exact.ok() && by_names->aligned <= exact->aligned) return exact;
  by_names->by_names = true;
  return by_names;
}

}  // namespace magneton::analysis
