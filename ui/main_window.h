#pragma once
// The explorer's main window. For now a shell with the menus and status bar
// that later panels (architecture, workload, search, inspector) dock into.
#include <QMainWindow>

namespace mw::ui {

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(QWidget* parent = nullptr);
};

} // namespace mw::ui
