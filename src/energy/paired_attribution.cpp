#include "energy/paired_attribution.h"

#include <fmt/core.h>

#include <algorithm>

namespace magneton::energy {

namespace {

// The devices whose energy a run attributed, in order.
std::vector<const DeviceEnergy*> WithEnergy(const Attribution& e) {
  std::vector<const DeviceEnergy*> out;
  for (const auto& d : e.devices)
    if (d.method != "unavailable") out.push_back(&d);
  return out;
}

std::string DeviceName(const Run& run, int32_t device) {
  for (const auto& d : run.devices)
    if (d.id == device) return d.name;
  return fmt::format("device {}", device);
}

}  // namespace

PairedAttribution AttributeAlike(const Run& a, const Run& b) {
  PairedAttribution out{Attribute(a), Attribute(b), {}};
  AttributionOptions oa, ob;
  const auto da = WithEnergy(out.a), db = WithEnergy(out.b);
  for (size_t i = 0; i < std::min(da.size(), db.size()); ++i) {
    const DeviceEnergy& x = *da[i];
    const DeviceEnergy& y = *db[i];
    const std::string name = DeviceName(a, x.device);
    // Only one side has the activity model, on the same kind of device.
    if (x.method == y.method || x.activity.has_value() == y.activity.has_value() || name != DeviceName(b, y.device))
      continue;
    const char lacking = x.activity ? 'b' : 'a';
    ActivityTrace tx = TraceActivity(a, x.device), ty = TraceActivity(b, y.device);
    const ActivityTrace& without = lacking == 'a' ? tx : ty;
    if (without.anchors.t_ns.empty() || without.busy.empty()) continue;  // it cannot have the model
    if (auto model = FitActivityModel({&tx, &ty})) {
      oa.activity[x.device] = ob.activity[y.device] = *model;
      out.notes.push_back(fmt::format(
          "energy on {}: run {}'s counter intervals could not fit the activity model alone (its busy fraction "
          "barely varies), the other run's could; both runs are attributed with one model fitted over the "
          "intervals of both (idle {:.0f} W, busy {:.0f} W), so the same kernels are costed the same way",
          name, lacking, model->idle_w, model->busy_w));
    } else {
      (lacking == 'a' ? ob : oa).power_shaped.insert(lacking == 'a' ? y.device : x.device);
      out.notes.push_back(fmt::format(
          "energy on {}: run {}'s counter intervals could not fit the activity model, not even together with "
          "the other run's; both runs are attributed by the power readings ({}), so the same kernels are "
          "costed the same way",
          name, lacking, lacking == 'a' ? x.method : y.method));
    }
  }
  if (!out.notes.empty()) {
    out.a = Attribute(a, oa);
    out.b = Attribute(b, ob);
  }
  return out;
}

}  // namespace magneton::energy
