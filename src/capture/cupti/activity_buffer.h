// Walking the records of a completed CUPTI activity buffer.
//
// Records are packed back to back and carry no size field; CUPTI's iterator
// (cuptiActivityGetNextRecord) knows each kind's size. A record's size is the
// distance to the next one, or to the end of the valid bytes for the last.
// The iterator is passed in, so this stays free of libcupti calls (the
// tracer passes cuptiActivityGetNextRecord; tests pass it too, since it needs
// no GPU).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include <cupti_activity.h>

#include "core/status.h"

namespace magneton::capture {

// cuptiActivityGetNextRecord's contract: *record is in/out; null asks for the
// first record, otherwise for the one after *record.
using NextRecordFn = CUptiResult (*)(uint8_t* buffer, size_t valid, CUpti_Activity** record);

// Calls fn(record, size) for each record in buffer[0, valid), in order; stops at
// fn's first error. A record that does not advance the walk (size 0, or past
// the end) is an error rather than an endless loop.
Status ForEachRecord(uint8_t* buffer, size_t valid, NextRecordFn next,
                     const std::function<Status(const CUpti_Activity* record, size_t size)>& fn);

}  // namespace magneton::capture
