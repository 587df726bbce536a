#include "ui/plot_export.h"

#include "common/atomic_file.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cstdio>

namespace mw::ui {

// A chart exported from a small or hidden widget still reads well.
constexpr int kMinWidth = 1200, kMinHeight = 700;

bool savePlot(QCustomPlot* plot, const QString& path) {
    const std::string target = path.toStdString();
    const QString temporary = QString::fromStdString(temporarySibling(target));
    const bool written = path.endsWith(".pdf", Qt::CaseInsensitive)
                             ? plot->savePdf(temporary)
                             : plot->savePng(temporary, std::max(plot->width(), kMinWidth),
                                             std::max(plot->height(), kMinHeight), 1.0, -1, 150);
    if (!written) {
        std::remove(temporary.toStdString().c_str());
        return false;
    }
    try {
        replaceWith(temporary.toStdString(), target);
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

} // namespace mw::ui
