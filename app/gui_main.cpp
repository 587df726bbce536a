// mapwright: the explorer GUI. The window itself lives in ui/.
#include "ui/main_window.h"

#include <QApplication>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("Mapwright");
    QApplication::setOrganizationName("Mapwright");
    mw::ui::MainWindow window;
    window.show();
    return QApplication::exec();
}
