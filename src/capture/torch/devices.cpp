// The run's device table as the recorder sees it: CUDA tensors map to the GPU
// rows the samplers and the CUPTI tracer use (matched by uuid), so energy,
// kernels and tensors of one GPU share one Device id.
#include "capture/torch/recorder_state.h"

namespace magneton::capture {

namespace {

std::string KindOf(const c10::Device& d) {
  return d.is_cuda() ? "gpu" : c10::DeviceTypeName(d.type(), /*lower_case=*/true);
}

// The id of `dev` in `table`, adding (and writing) it when absent.
Result<int32_t> Place(Device dev, std::vector<Device>& table, RunWriter& writer) {
  for (const auto& d : table) {
    bool same = !dev.uuid.empty() && !d.uuid.empty() ? d.uuid == dev.uuid
                                                     : d.kind == dev.kind && d.ordinal == dev.ordinal;
    if (same) return d.id;
  }
  dev.id = static_cast<int32_t>(table.size());
  MAGNETON_RETURN_IF_ERROR(writer.Add(dev));
  table.push_back(dev);
  return dev.id;
}

}  // namespace

Status RecorderState::AddKnownDevices() {
  for (const auto& known : options.devices) {
    auto id = Place(known, devices, *writer);
    if (!id.ok()) return id.error();
    const int type = static_cast<int>(known.kind == "gpu" ? c10::DeviceType::CUDA : c10::DeviceType::CPU);
    device_ids[{type, known.ordinal}] = *id;
  }
  return Status::Ok();
}

int32_t RecorderState::DeviceId(const c10::Device& d) {
  if (d.is_cpu()) return kHostDevice;
  const auto key = std::make_pair(static_cast<int>(d.type()), static_cast<int>(d.index()));
  auto it = device_ids.find(key);
  if (it != device_ids.end()) return it->second;
  // An accelerator Python did not list (another backend): add it now.
  Device dev;
  dev.kind = KindOf(d);
  dev.ordinal = d.index();
  std::lock_guard<std::mutex> lock(writer_mu);
  auto id = Place(dev, devices, *writer);
  const int32_t out = id.ok() ? *id : kHostDevice;
  device_ids[key] = out;
  return out;
}

}  // namespace magneton::capture
