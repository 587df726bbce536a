// The search panel's convergence plot, offscreen: a first run's curve grows
// live; the proven optimum is drawn and compared against; the plot is in the
// units of the objective the form shows (its axis, its lower bound, the runs
// it draws) and says which runs it leaves out; curves survive a change of
// layer while their runs go on.
#include "gui_support.h"

#include <QComboBox>

using namespace mw::gui_test;

namespace {

QCPGraph* graphNamed(QCustomPlot* plot, const QString& name) {
    for (int i = 0; i < plot->graphCount(); ++i)
        if (plot->graph(i)->name() == name)
            return plot->graph(i);
    return nullptr;
}

} // namespace

class TestGuiPlot : public GuiTest {
    Q_OBJECT
  private slots:
    void initTestCase() { prepareScratch(); }

    // Issue 31, item 5: a first Run with the defaults lasts long enough to
    // watch its curve grow, on a wall-time axis.
    void firstRunShowsALiveCurve() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* panel = w.searchPanel();
        panel->setSearchers({"gamma"});
        QCOMPARE(panel->runSelected(), 1); // the default budget
        QCOMPARE(panel->plot()->xAxis->label(), QString("wall time (s)"));
        QVERIFY(panel->plot()->yAxis->label().contains("J × cycles"));
        QTest::qWait(1500);
        QCOMPARE(panel->runningCount(), 1); // still growing after 1.5 s
        QVERIFY(panel->plot()->graph(0)->dataCount() > 0);
        panel->cancelAll();
        QVERIFY(w.waitForSearches(60000));
        QVERIFY(w.session().runs.at(0).result.seconds >= 1.0);
    }

    void plotsTheProvenOptimum() {
        // Under the tutorial's row-stationary constraints the optimal searcher
        // proves a layer's optimum within seconds (the fully connected layer:
        // a tenth of one): the chart draws it as a line, and the results table
        // gives each run's distance above it.
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const auto& layers = w.session().network.layers;
        w.selectLayer(int(layers.size()) - 1);
        auto* panel = w.searchPanel();
        QVERIFY(panel->loadConstraints(QString(MAPWRIGHT_SOURCE_DIR) +
                                       "/samples/constraints/eyeriss_row_stationary.json"));
        panel->setSearchers({"optimal", "random"});
        panel->setBudget(100'000, 0);
        panel->setSeeds(1);
        QCOMPARE(panel->runSelected(), 2);
        QVERIFY(w.waitForSearches(120000));
        double optimum = 0.0;
        for (const auto& r : w.session().runs)
            if (r.searcher == "optimal")
                optimum = mw::provenOptimum(r.result);
        QVERIFY(optimum > 0);
        QCPGraph* line = nullptr;
        for (int i = 0; i < panel->plot()->graphCount(); ++i)
            if (panel->plot()->graph(i)->name() == "optimum")
                line = panel->plot()->graph(i);
        QVERIFY(line && line->data()->size() == 2);
        QCOMPARE(line->data()->begin()->value, optimum);
        QTableWidget* table = panel->resultsTable();
        int checked = 0;
        for (int row = 0; row < table->rowCount(); ++row) {
            const QString searcher = table->item(row, mw::ui::SearchPanel::ColSearcher)->text();
            const QString over = table->item(row, mw::ui::SearchPanel::ColOverOptimum)->text();
            const double best = table->item(row, mw::ui::SearchPanel::ColFinal)->text().toDouble();
            QVERIFY2(over.endsWith(" %"), qPrintable(over));
            const double percent = over.chopped(2).toDouble();
            if (searcher == "optimal")
                QCOMPARE(over, QString("0.0 %"));
            else // random search stays above it (rounded as the cells show them)
                QVERIFY2(percent >= 0 && std::abs(percent - 100 * (best / optimum - 1)) < 0.1,
                         qPrintable(over));
            ++checked;
        }
        QCOMPARE(checked, 2);

        // The proof's hundreds of thousands of evaluations beside random's
        // few: a log x axis, with no key below the first evaluation, saved
        // with the session and restored with it.
        panel->setLogX(true);
        QCOMPARE(panel->plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(panel->plot()->xAxis->range().lower, 1.0);
        // (The plot was rebuilt: its graphs are new ones.)
        bool optimumFromTheFirst = false;
        for (int i = 0; i < panel->plot()->graphCount(); ++i) {
            const QCPGraph* g = panel->plot()->graph(i);
            QVERIFY(!g->data()->isEmpty());
            QVERIFY2(g->data()->begin()->key >= 1.0, qPrintable(g->name()));
            if (g->name() == "optimum")
                optimumFromTheFirst = g->data()->begin()->key == 1.0;
        }
        QVERIFY(optimumFromTheFirst);
        panel->setTimeAxis(true);
        QCOMPARE(panel->plot()->xAxis->range().lower, 1e-4);
        const QString saved = dir_.filePath("log-axis.json");
        QVERIFY(w.saveSession(saved));
        const mw::Session back = mw::loadSession(saved.toStdString());
        QVERIFY(back.view.searchLogX && back.view.searchSeconds);
        MainWindow again(testOptions(dir_.path()));
        QVERIFY(again.openSession(saved));
        QVERIFY(again.searchPanel()->view().searchLogX &&
                again.searchPanel()->view().searchSeconds);
        QCOMPARE(again.searchPanel()->plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        panel->setLogX(false);
        QCOMPARE(panel->plot()->xAxis->scaleType(), QCPAxis::stLinear);
        QCOMPARE(panel->plot()->xAxis->range().lower, 0.0);
        // An edit that re-costs the runs: the proof was of the design before
        // it, so no optimum is drawn or compared against.
        mw::Architecture slower = w.session().arch;
        slower.levels[0].readBandwidth = 0.01;
        QVERIFY(w.architectureEditor()->applyEdit(slower, "slower DRAM"));
        for (int i = 0; i < panel->plot()->graphCount(); ++i)
            QVERIFY(panel->plot()->graph(i)->name() != "optimum");
        for (int row = 0; row < table->rowCount(); ++row)
            QVERIFY(table->item(row, mw::ui::SearchPanel::ColOverOptimum)->text().isEmpty());
        const auto optimumDrawn = [&] {
            for (int i = 0; i < panel->plot()->graphCount(); ++i)
                if (panel->plot()->graph(i)->name() == "optimum")
                    return true;
            return false;
        };
        w.undoStack()->undo(); // and back: the proof holds again
        QVERIFY(optimumDrawn());
        // An edit that leaves the proving run's own cost as it was, yet may
        // let other mappings do better (a larger buffer): the proof is not
        // this design's either.
        mw::Architecture larger = w.session().arch;
        larger.levels[std::size_t(larger.levelIndex("shared_glb"))].capacityWords *= 2;
        QVERIFY(w.architectureEditor()->applyEdit(larger, "larger buffer"));
        QVERIFY(!optimumDrawn());
        w.undoStack()->undo();
        QVERIFY(optimumDrawn());
    }

    // Runs of two objectives on one layer: the plot draws those of the
    // objective the form shows, on its axis and with its lower bound, and
    // says how many it leaves out; the view a finished run opens is the best
    // of its own objective, not a figure in other units that looks smaller.
    void drawsTheObjectiveShown() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* panel = w.searchPanel();
        panel->setSearchers({"random"});
        panel->setBudget(300, 0);
        panel->setSeeds(1, 3);
        panel->setObjective("energy");
        QVERIFY(panel->plot()->yAxis->label().contains("energy"));
        QCOMPARE(panel->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        // A session opened again shows the objective it last searched, and
        // so its curves.
        const QString saved = dir_.filePath("energy-run.json");
        QVERIFY(w.saveSession(saved));
        {
            MainWindow again(testOptions(dir_.path()));
            QVERIFY(again.openSession(MainWindow::defaultSessionPath()));
            QCOMPARE(again.searchPanel()->findChild<QComboBox*>("objective")->currentText(),
                     QString("edp"));
            QVERIFY(again.openSession(saved));
            QCOMPARE(again.searchPanel()->findChild<QComboBox*>("objective")->currentText(),
                     QString("energy"));
            QVERIFY(graphNamed(again.searchPanel()->plot(), "random · seed 3"));
            QVERIFY(again.searchPanel()->plotNote().isEmpty());
        }
        panel->setObjective("edp");
        QVERIFY(panel->plot()->yAxis->label().contains("J × cycles"));
        QVERIFY(!graphNamed(panel->plot(), "random · seed 3"));
        EXPECT_CONTAINS(panel->plotNote().toStdString(),
                        "1 run of this layer that searched another objective "
                        "(energy: 1)");
        panel->setSearchers({"gamma"});
        QCOMPARE(panel->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        QCOMPARE(w.session().runs.size(), std::size_t(2));
        const mw::SessionRun& edpRun = w.session().runs[1];
        QCOMPARE(edpRun.settings.objective.name(), std::string("edp"));
        // (The energy run's figure, in joules, is far below any EDP's.)
        QVERIFY(w.session().runs[0].result.bestCost < edpRun.result.bestCost);
        QCOMPARE(w.energyView()->currentRun(), 1);
        QCOMPARE(w.inspector()->evaluation().edp, edpRun.result.bestEvaluation.edp);
        QVERIFY(graphNamed(panel->plot(), "gamma · seed 3"));
        QVERIFY(!graphNamed(panel->plot(), "random · seed 3"));

        // Choosing the other objective in the form: its axis, its bound, its run.
        auto* objective = panel->findChild<QComboBox*>("objective");
        QVERIFY(objective);
        objective->setCurrentText("energy");
        QVERIFY(panel->plot()->yAxis->label().contains("energy"));
        QVERIFY(graphNamed(panel->plot(), "random · seed 3"));
        QVERIFY(!graphNamed(panel->plot(), "gamma · seed 3"));
        EXPECT_CONTAINS(panel->plotNote().toStdString(), "(edp: 1)");
        const mw::Problem p =
            mw::buildProblem(w.session().network.layers[std::size_t(w.session().currentLayer)]);
        const double energyBound =
            mw::lowerBound(p, w.session().arch, mw::SearchObjective::parse("energy")).objective;
        QCPGraph* bound = graphNamed(panel->plot(), "lower bound");
        QVERIFY(bound && !bound->data()->isEmpty());
        QCOMPARE(bound->data()->begin()->value, energyBound);
        QVERIFY(energyBound <= w.session().runs[0].result.bestCost);
        objective->setCurrentText("cycles");
        EXPECT_CONTAINS(panel->plotNote().toStdString(), "2 runs");
        QCOMPARE(panel->plot()->graphCount(), 1); // the lower bound alone
    }

    // A run's curve while the user looks at another layer and back: it is
    // drawn again, growing, and nothing touches the curve the plot dropped.
    void curvesFollowTheLayerShown() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const int layer = w.session().currentLayer;
        const int other = layer == 0 ? 1 : 0;
        auto* panel = w.searchPanel();
        panel->setSearchers({"gamma"});
        panel->setBudget(1'000'000'000, 0);
        panel->setSeeds(1, 5);
        QCOMPARE(panel->runSelected(), 1);
        QTest::qWait(300);
        w.selectLayer(other);
        QVERIFY(!graphNamed(panel->plot(), "gamma · seed 5"));
        QTest::qWait(400); // progress arrives and the plot refreshes meanwhile
        w.selectLayer(layer);
        QTest::qWait(300);
        QCPGraph* curve = graphNamed(panel->plot(), "gamma · seed 5");
        QVERIFY(curve);
        QVERIFY(!curve->data()->isEmpty());
        panel->cancelAll();
        QVERIFY(w.waitForSearches(30000));
        QCOMPARE(w.session().runs.size(), std::size_t(1));
        QVERIFY(graphNamed(panel->plot(), "gamma · seed 5"));
    }
};

QTEST_MAIN(TestGuiPlot)
#include "test_gui_plot.moc"
