#pragma once
// A run's progress on the terminal: one line, rewritten in place, when
// stderr is a terminal; a line a second (and one at each new phase) when it
// is a file or a pipe, so logs stay readable.
#include "search/search.h"

#include <string>

namespace cli {

class ProgressLine {
  public:
    // searchFigures: the line ends with evaluations, seconds and best (a
    // search's); without, only the phase shows (training a surrogate alone).
    explicit ProgressLine(bool searchFigures = true);
    ~ProgressLine() { clear(); }
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    void show(const mw::SearchProgress& p);
    // Ends the line being rewritten, so later output starts on its own.
    void clear();

    // What show() writes, without the terminal's control characters.
    static std::string describe(const mw::SearchProgress& p, bool searchFigures = true);

  private:
    bool terminal_ = false;
    bool searchFigures_ = true;
    bool open_ = false; // a rewritten line is on screen
    double lastShown_ = -10.0;
    std::string lastPhase_;
};

} // namespace cli
