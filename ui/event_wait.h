#pragma once
// Waiting on worker threads from the GUI thread without blocking it (tests,
// scripted screenshots): the events run, queued results arrive.
#include <functional>

namespace mw::ui {

// Processes events until busy() is false or timeoutMs pass; returns !busy().
bool processEventsWhile(const std::function<bool()>& busy, int timeoutMs);

} // namespace mw::ui
