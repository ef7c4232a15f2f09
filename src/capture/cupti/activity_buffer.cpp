#include "capture/cupti/activity_buffer.h"

#include <fmt/core.h>

namespace magneton::capture {

Status ForEachRecord(uint8_t* buffer, size_t valid, NextRecordFn next,
                     const std::function<Status(const CUpti_Activity*, size_t)>& fn) {
  CUpti_Activity* record = nullptr;
  if (next(buffer, valid, &record) != CUPTI_SUCCESS || !record) return Status::Ok();
  const uint8_t* end = buffer + valid;
  while (record) {
    CUpti_Activity* following = record;  // the iterator goes on from the record it is given
    const bool more = next(buffer, valid, &following) == CUPTI_SUCCESS && following;
    const auto* at = reinterpret_cast<const uint8_t*>(record);
    const auto* stop = more ? reinterpret_cast<const uint8_t*>(following) : end;
    if (stop <= at || stop > end)
      return MakeError(ErrorCode::kCorrupt, fmt::format("activity buffer: the record at byte {} of {} does not advance",
                                                        at - buffer, valid));
    MAGNETON_RETURN_IF_ERROR(fn(record, static_cast<size_t>(stop - at)));
    record = more ? following : nullptr;
  }
  return Status::Ok();
}

}  // namespace magneton::capture
