#include "ui/gui_bench.h"

#include "ui/main_window.h"
#include "ui/search_panel.h"

#include <QElapsedTimer>
#include <QTimer>

#include <algorithm>

namespace mw::ui {

GuiResponsiveness measureResponsiveness(MainWindow& window, double searchSeconds, int threads) {
    GuiResponsiveness r;
    window.show();
    window.showView("search");
    SearchPanel* panel = window.searchPanel();
    panel->setSearchers({"gamma", "random"});
    panel->setBudget(0, searchSeconds);
    panel->setThreads(threads);
    QElapsedTimer clock;
    qint64 last = 0;
    QTimer tick;
    tick.setInterval(5);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.elapsed();
        r.longestGapMs = std::max(r.longestGapMs, now - last);
        last = now;
        ++r.ticks;
    });
    const int replotsBefore = panel->replots();
    panel->runSelected();
    clock.start();
    tick.start();
    r.finished = window.waitForSearches(int(1000 * (searchSeconds + 60)));
    r.seconds = clock.elapsed() / 1000.0;
    tick.stop();
    r.replots = panel->replots() - replotsBefore;
    r.replotsPerSecond = r.seconds > 0 ? r.replots / r.seconds : 0.0;
    return r;
}

} // namespace mw::ui
