#include "cli_progress.h"

#include "cli_common.h"

#include <cmath>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace cli {

ProgressLine::ProgressLine(bool searchFigures)
    : terminal_(isatty(STDERR_FILENO) != 0), searchFigures_(searchFigures) {}

std::string ProgressLine::describe(const mw::SearchProgress& p, bool searchFigures) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(1);
    if (!p.phase.empty()) {
        o << p.phase;
        if (p.phaseFraction >= 0)
            o << "  " << int(std::floor(100 * p.phaseFraction)) << " %";
        if (p.phaseSecondsLeft >= 0)
            o << ", " << std::llround(p.phaseSecondsLeft) << " s left";
        if (!searchFigures)
            return o.str();
        o << "  |  ";
    }
    o << p.evaluations << " evaluations, " << p.seconds << " s, best "
      << (p.best >= mw::SearchContext::kInfinity ? std::string("-") : sci(p.best));
    return o.str();
}

void ProgressLine::show(const mw::SearchProgress& p) {
    const bool newPhase = p.phase != lastPhase_;
    if (terminal_) {
        if (p.seconds - lastShown_ < 0.1 && !newPhase && !p.finished)
            return;
        std::cerr << "\r\033[K  " << describe(p, searchFigures_) << std::flush;
        open_ = true;
    } else {
        if (p.seconds - lastShown_ < 1.0 && !newPhase && !p.finished)
            return;
        std::cerr << "  " << describe(p, searchFigures_) << "\n";
    }
    lastShown_ = p.seconds;
    lastPhase_ = p.phase;
}

void ProgressLine::clear() {
    if (open_)
        std::cerr << "\n";
    open_ = false;
}

} // namespace cli
