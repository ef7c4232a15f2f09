// Work at process exit that must never hold the host up: a flush that waits
// on a driver already torn down, a thread join that never returns. The work
// runs on a thread of its own; the caller waits a bounded time, then goes on
// and leaves the thread behind (exit ends it).
#pragma once

#include <chrono>
#include <functional>

namespace magneton::capture {

// Runs fn and waits at most `limit` for it. True when it finished in time.
bool RunWithin(std::function<void()> fn, std::chrono::milliseconds limit);

// Where a stop is now ("flushing CUPTI", ...), so a stop that overruns can say
// where it stuck. Static strings only.
void NoteStopStage(const char* stage);
const char* StopStage();
// The same for the tracer's drain thread, which a stop waits to join.
void NoteDrainStage(const char* stage);
const char* DrainStage();

}  // namespace magneton::capture
