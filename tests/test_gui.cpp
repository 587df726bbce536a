// The GUI target is wired: the main window builds and shows offscreen.
#include "ui/main_window.h"

#include <QMenuBar>
#include <QStatusBar>
#include <QtTest>

class TestGui : public QObject {
    Q_OBJECT
  private slots:
    void mainWindowShows() {
        mw::ui::MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.windowTitle(), QString("Mapwright"));
        QVERIFY(!w.menuBar()->actions().isEmpty());
        QVERIFY(w.statusBar() != nullptr);
    }
};

QTEST_MAIN(TestGui)
#include "test_gui.moc"
