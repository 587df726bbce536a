#include "ui/main_window.h"

#include <QLabel>
#include <QMenuBar>
#include <QStatusBar>

namespace mw::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle("Mapwright");
    resize(1200, 800);
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Quit"), this, &QWidget::close);
    auto* placeholder = new QLabel(tr("Mapwright — map-space exploration for tensor accelerators"));
    placeholder->setAlignment(Qt::AlignCenter);
    setCentralWidget(placeholder);
    statusBar()->showMessage(tr("Ready"));
}

} // namespace mw::ui
