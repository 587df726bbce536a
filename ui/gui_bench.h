#pragma once
// How responsive the GUI stays while searches run on worker threads: two
// searches (GAMMA and random, 2 threads each) on the open session's layer,
// the GUI thread ticking every 5 ms. A measurement, reported by
// `mapwright --bench-gui`; tests assert only that progress and plots arrive.
#include <QtGlobal>

namespace mw::ui {

class MainWindow;

struct GuiResponsiveness {
    qint64 longestGapMs = 0;       // between two ticks of the GUI thread
    double replotsPerSecond = 0.0; // convergence plot refreshes
    int replots = 0;
    int ticks = 0;
    double seconds = 0.0;
    bool finished = false; // the searches ended within the wait
};

// The window must have a session open; it is shown on the search view.
GuiResponsiveness measureResponsiveness(MainWindow& window, double searchSeconds = 2.0,
                                        int threads = 2);

} // namespace mw::ui
