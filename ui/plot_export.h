#pragma once
// Charts saved as PNG (150 dpi) or PDF by the file name, written beside the
// target and renamed over it, as every file the program writes (common/atomic_file.h).
#include <QString>

class QCustomPlot;

namespace mw::ui {

bool savePlot(QCustomPlot* plot, const QString& path);

} // namespace mw::ui
