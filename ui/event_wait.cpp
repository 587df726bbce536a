#include "ui/event_wait.h"

#include <QCoreApplication>
#include <QElapsedTimer>

namespace mw::ui {

bool processEventsWhile(const std::function<bool()>& busy, int timeoutMs) {
    QElapsedTimer t;
    t.start();
    while (busy() && t.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QCoreApplication::processEvents(); // what the last report queued
    return !busy();
}

} // namespace mw::ui
