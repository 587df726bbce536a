// The explorer GUI's runs, offscreen: two searchers run side by side and
// reach the plot, the results table and the inspector; runs pause, cancel
// and keep their best, follow workload edits and undo, and close with the
// session; the GUI thread stays responsive under a 2-thread search;
// design-space sweeps and network searches run and open their points. (The
// convergence plot itself: test_gui_plot.)
#include "gui_support.h"

#include <QComboBox>
#include <QStatusBar>
#include <QTreeWidget>

using namespace mw::gui_test;

class TestGuiRuns : public GuiTest {
    Q_OBJECT
  private slots:
    void initTestCase() { prepareScratch(); }

    void runsTwoSearchersSideBySide() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        w.show();
        auto* panel = w.searchPanel();
        panel->setSearchers({"gamma", "random"});
        panel->setBudget(2000, 0);
        panel->setSeeds(1, 7);
        QCOMPARE(panel->runSelected(), 2);
        QCOMPARE(panel->runningCount(), 2);
        QVERIFY(w.waitForSearches(60000));
        QCOMPARE(w.session().runs.size(), std::size_t(2));
        // The plot holds both curves (and the lower bound).
        QStringList names;
        for (int i = 0; i < panel->plot()->graphCount(); ++i) {
            QCPGraph* g = panel->plot()->graph(i);
            QVERIFY(g->dataCount() > 0);
            names << g->name();
        }
        QVERIFY(names.contains("gamma · seed 7"));
        QVERIFY(names.contains("random · seed 7"));
        QVERIFY(names.contains("lower bound"));
        QCOMPARE(panel->resultsTable()->rowCount(), 2);
        // GAMMA and random have no figures of their own: the model's
        // (model_levels_reused) are in the status's tooltip, and the
        // figures column gives its width to the status.
        using mw::ui::SearchPanel;
        for (int row = 0; row < 2; ++row) {
            QVERIFY(panel->resultsTable()->item(row, SearchPanel::ColFigures)->text().isEmpty());
            QVERIFY(panel->resultsTable()
                        ->item(row, SearchPanel::ColStatus)
                        ->toolTip()
                        .contains("model_levels_reused"));
        }
        QVERIFY(panel->resultsTable()->isColumnHidden(SearchPanel::ColFigures));
        // The inspector shows the better of the two best mappings, legal.
        auto* inspector = w.inspector();
        QVERIFY(inspector->hasMapping());
        QVERIFY(inspector->evaluation().valid);
        const double best =
            std::min(w.session().runs[0].result.bestCost, w.session().runs[1].result.bestCost);
        QCOMPARE(inspector->evaluation().edp, best);
        QVERIFY(inspector->loopNestText().contains("for "));
        QVERIFY(w.energyView()->currentRun() >= 0);
        for (const auto& r : w.session().runs) {
            QCOMPARE(r.result.evaluations, std::int64_t(2000));
            QVERIFY(r.result.bestEvaluation.valid);
        }
    }

    // Issue 31, item 4: a paused run's clock stops. A 1 s run paused for 2.5 s
    // is still running when resumed, and reports about 1 s of search; while
    // paused, the status bar says so.
    void pauseStopsTheClock() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* panel = w.searchPanel();
        panel->setSearchers({"random"});
        panel->setBudget(0, 1.0);
        QCOMPARE(panel->runSelected(), 1);
        panel->setPausedAll(true);
        auto* status = w.findChild<QLabel*>("runningSearches");
        QVERIFY(status);
        QCOMPARE(status->text(), QString("1 search paused"));
        QElapsedTimer wall;
        wall.start();
        QTest::qWait(2500);
        QCOMPARE(panel->runningCount(), 1); // still there: its second is not spent
        panel->setPausedAll(false);
        QCOMPARE(status->text(), QString("1 search running"));
        QVERIFY(w.waitForSearches(60000));
        QVERIFY(wall.elapsed() >= 2500);
        const mw::SearchResult& r = w.session().runs.at(0).result;
        QCOMPARE(r.stopReason, std::string("time budget spent"));
        QVERIFY2(r.seconds >= 1.0 && r.seconds < 2.0, qPrintable(QString::number(r.seconds)));
        QCOMPARE(status->text(), QString("No search running"));
    }

    // Issue 31, item 3: the design-space view's default axes come from the
    // session that is open (its largest buffer, its PE array), are worked out
    // again when another opens, and the bar counts the points they make.
    void designSpaceDefaultsFollowTheSession() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const auto meshOf = [](const mw::Architecture& a) {
            return std::to_string(a.compute.meshX) + "x" + std::to_string(a.compute.meshY);
        };
        const auto check = [&](const mw::Architecture& a, const std::string& buffer) {
            const auto axes = w.designView()->axes();
            int points = 1;
            bool mesh = false, capacity = false;
            for (const auto& axis : axes) {
                points *= int(axis.values.size());
                mesh = mesh || (axis.parameter == "pe_mesh" && axis.values.front() == meshOf(a));
                capacity = capacity || axis.parameter == buffer + ".capacity_words";
            }
            QString listed;
            for (const auto& axis : axes)
                listed += QString::fromStdString(axis.parameter) + " ";
            QVERIFY2(mesh && capacity, qPrintable(listed));
            auto* bar = w.designView()->findChild<QProgressBar*>();
            QVERIFY(bar);
            QCOMPARE(bar->maximum(), points);
        };
        check(w.session().arch, "shared_glb");
        QVERIFY(w.designView()->plot()->minimumHeight() >= 200);
        mw::Session other = w.session();
        other.arch = mw::loadArchitecture(
            (kSource + "/samples/architectures/simba_like.json").toStdString());
        other.runs.clear();
        w.setSession(other);
        QVERIFY(meshOf(other.arch) != "14x12");
        check(other.arch, "WeightBuffer"); // 128 x 4,096 words: its largest
    }

    // Issue 31, item 1: a workload edit keeps every run. Runs that no longer
    // fit are marked stale (greyed, figures as computed, not drawn); the edit
    // is undone with Undo, and a stale run runs again on the current design.
    void workloadEditsKeepRunsAndUndo() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const int layer = w.session().currentLayer;
        const int other = layer == 0 ? 1 : 0;
        auto* panel = w.searchPanel();
        panel->setSearchers({"gamma"});
        panel->setBudget(300, 0);
        w.selectLayer(other);
        QCOMPARE(panel->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        w.selectLayer(layer);
        QCOMPARE(panel->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        QCOMPARE(w.session().runs.size(), std::size_t(2));
        const mw::SessionRun computed = w.session().runs[1];
        const int graphs = panel->plot()->graphCount();
        const std::int64_t c = w.session().network.layers[std::size_t(layer)].param("C", 0);
        QVERIFY(w.workloadEditor()->setCell(layer, "C", QString::number(c / 2)));
        QCOMPARE(w.session().runs.size(), std::size_t(2)); // nothing deleted
        QVERIFY(w.session().runs[0].stale.empty());        // the untouched layer's run
        QVERIFY(!w.session().runs[1].stale.empty());
        QCOMPARE(w.session().runs[1].result.bestEvaluation.edp, computed.result.bestEvaluation.edp);
        QCOMPARE(panel->plot()->graphCount(), graphs - 1); // its curve is not drawn
        QVERIFY(panel->resultsTable()->item(1, 0)->toolTip().startsWith("Stale"));
        // The energy view showed the run that became stale: it says so, and
        // does not draw its levels under this design's names.
        QCOMPARE(w.energyView()->currentRun(), 1);
        QVERIFY(w.energyView()->summaryText().contains("Stale"));
        QCOMPARE(w.energyView()->levelsPlot()->plottableCount(), 0);
        QVERIFY(w.undoStack()->canUndo());
        w.undoStack()->undo();
        QCOMPARE(w.session().network.layers[std::size_t(layer)].param("C", 0), c);
        QVERIFY(w.session().runs[1].stale.empty());
        QCOMPARE(panel->plot()->graphCount(), graphs);
        w.undoStack()->redo();
        QVERIFY(!w.session().runs[1].stale.empty());
        // A session with stale runs saves and opens again with them, also when
        // a run's layer is gone: nothing is lost on the way to disk.
        QVERIFY(w.workloadEditor()->removeLayer(other));
        QVERIFY(!w.session().runs[0].stale.empty());
        const QString saved = dir_.filePath("stale-runs.json");
        QVERIFY2(w.saveSession(saved), qPrintable(w.lastError()));
        {
            MainWindow again(testOptions(dir_.path()));
            QVERIFY2(again.openSession(saved), qPrintable(again.lastError()));
            QCOMPARE(again.session().runs.size(), std::size_t(2));
            for (std::size_t i = 0; i < 2; ++i) {
                QVERIFY(!again.session().runs[i].stale.empty());
                QCOMPARE(again.session().runs[i].result.bestEvaluation.cycles,
                         w.session().runs[i].result.bestEvaluation.cycles);
            }
        }
        w.undoStack()->undo(); // the layer is back, its run current
        QVERIFY(w.session().runs[0].stale.empty());
        // Run again on the current design: a new, current run.
        QVERIFY(panel->rerun(1));
        QVERIFY(w.waitForSearches(60000));
        QCOMPARE(w.session().runs.size(), std::size_t(3));
        QVERIFY(w.session().runs[2].stale.empty() && w.session().runs[2].result.found);
    }

    // Issue 31, item 2: undoing a design point leaves its runs stale, with the
    // figures they were computed with, and no view takes them as a best.
    void undoneDesignPointLeavesNoWrongNumbers() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const int layer = w.session().currentLayer;
        mw::SweepSpec spec;
        spec.base = w.session().arch;
        spec.network = w.session().network;
        spec.searcher = "gamma";
        mw::Architecture big = spec.base;
        QVERIFY(w.architectureEditor()->setPeArray(16, 16)); // the point's design, as an edit
        big = w.session().arch;
        w.undoStack()->undo();
        const mw::Problem p = mw::buildProblem(spec.network.layers[std::size_t(layer)]);
        mw::SearchSettings s;
        s.budget.evaluations = 3000;
        const mw::SearchResult found = mw::runSearch(mw::MapSpace(p, big), "gamma", s);
        QVERIFY(found.found);
        QVERIFY2(!mw::evaluate(p, spec.base, found.best).valid,
                 "the point's mapping must need its 16 x 16 array");
        mw::PointRecord point;
        point.index = 3;
        point.valid = true;
        point.architecture = mw::toJson(big);
        point.layers.resize(spec.network.layers.size());
        point.layers[std::size_t(layer)].mapping = mw::toJson(found.best, p, big);
        w.openDesignPoint(spec, point);
        QCOMPARE(w.session().runs.size(), std::size_t(1));
        const mw::Evaluation computed = w.session().runs[0].result.bestEvaluation;
        QVERIFY(computed.valid && computed.energy > 0);
        w.undoStack()->undo();
        QCOMPARE(w.session().arch.compute.instances(), std::int64_t(168));
        const mw::SessionRun& run = w.session().runs.at(0);
        QVERIFY(!run.stale.empty());
        QCOMPARE(run.result.bestEvaluation.energy, computed.energy); // not 0.00
        QCOMPARE(run.result.bestEvaluation.cycles, computed.cycles);
        // The table shows its figures, greyed; no curve, no best of the energy view.
        QTableWidget* table = w.searchPanel()->resultsTable();
        QVERIFY(table->item(0, mw::ui::SearchPanel::ColCycles)->text() != "0");
        QVERIFY(table->item(0, 0)->toolTip().startsWith("Stale"));
        for (int i = 0; i < w.searchPanel()->plot()->graphCount(); ++i)
            QVERIFY(!w.searchPanel()->plot()->graph(i)->name().startsWith("gamma"));
    }

    // Issue 31, item 6: runs tell apart. Each run has its own legend entry and
    // look, numbered labels, and a row that does not move when another run
    // finishes.
    void runsTellApart() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* panel = w.searchPanel();
        panel->setSearchers({"random"});
        panel->setBudget(0, 3.0); // the first run outlasts the second
        panel->setSeeds(1, 1);
        QCOMPARE(panel->runSelected(), 1);
        panel->setBudget(0, 0.3);
        panel->setSeeds(1, 2);
        QCOMPARE(panel->runSelected(), 1);
        QTableWidget* table = panel->resultsTable();
        const auto seedAt = [&](int row) {
            return table->item(row, mw::ui::SearchPanel::ColSeed)->text();
        };
        QCOMPARE(seedAt(0), QString("1"));
        QCOMPARE(seedAt(1), QString("2"));
        QTRY_VERIFY_WITH_TIMEOUT(panel->runningCount() == 1, 30000); // seed 2 finished
        QCOMPARE(seedAt(0), QString("1"));                           // the running one kept its row
        QCOMPARE(seedAt(1), QString("2"));
        QVERIFY(table->item(0, mw::ui::SearchPanel::ColStatus)->text().startsWith("running"));
        QVERIFY(w.waitForSearches(60000));
        QCOMPARE(seedAt(0), QString("1"));
        // Seed 2 finished first, yet every view lists the runs as they
        // started, under the same numbers: the session, the project tree,
        // the pickers and the legend.
        QCOMPARE(w.session().runs.at(0).settings.seed, std::uint64_t(1));
        QCOMPARE(w.session().runs.at(1).settings.seed, std::uint64_t(2));
        auto* tree = w.findChild<QTreeWidget*>("projectTree");
        QVERIFY(tree);
        const auto runsItem = tree->findItems("Runs (2)", Qt::MatchExactly);
        QCOMPARE(runsItem.size(), 1);
        QVERIFY(runsItem[0]->child(0)->text(0).startsWith("#1 random · seed 1"));
        QVERIFY(runsItem[0]->child(1)->text(0).startsWith("#2 random · seed 2"));
        QCOMPARE(w.energyView()->findChild<QComboBox*>("energyRunPicker")->itemText(0),
                 mw::ui::runLabel(w.session().runs[0], 0));
        QStringList legend;
        for (int i = 0; i < panel->plot()->graphCount(); ++i)
            if (panel->plot()->graph(i)->name().startsWith("random"))
                legend << panel->plot()->graph(i)->name();
        QCOMPARE(legend, QStringList({"random · seed 1", "random · seed 2"}));
        QStringList names;
        QSet<QString> looks;
        for (int i = 0; i < panel->plot()->graphCount(); ++i) {
            QCPGraph* g = panel->plot()->graph(i);
            if (!g->name().startsWith("random"))
                continue;
            names << g->name();
            looks << g->pen().color().name() + QString::number(int(g->pen().style()));
            QVERIFY(panel->plot()->legend->hasItemWithPlottable(g));
        }
        names.sort();
        QCOMPARE(names, QStringList({"random · seed 1", "random · seed 2"}));
        QCOMPARE(looks.size(), 2);
    }

    // A run that finishes after an edit of the design is costed on the design
    // as it now is (or marked stale), as the edit did every other run.
    void runFinishingAfterAnEditIsRecosted() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* panel = w.searchPanel();
        panel->setSearchers({"random"});
        panel->setBudget(0, 1.0);
        QCOMPARE(panel->runSelected(), 1);
        const mw::Architecture original = w.session().arch;
        mw::Architecture slower = original;
        slower.levels[0].readBandwidth = 0.25;
        QVERIFY(w.architectureEditor()->applyEdit(slower, "slower DRAM"));
        QVERIFY(w.waitForSearches(60000));
        const mw::SessionRun& run = w.session().runs.at(0);
        const mw::Problem p = mw::buildProblem(
            w.session().network.layers[std::size_t(w.session().network.layerIndex(run.layer))]);
        const mw::Evaluation now = mw::evaluate(p, w.session().arch, run.result.best);
        if (now.valid) {
            QCOMPARE(run.result.bestEvaluation.cycles, now.cycles);
            // (the edit changes them: the search's own figures were others)
            QVERIFY(mw::evaluate(p, original, run.result.best).cycles != now.cycles);
            // The table's figures are of the design as it is, and say so.
            using mw::ui::SearchPanel;
            const QTableWidget* table = panel->resultsTable();
            QCOMPARE(table->item(0, SearchPanel::ColFinal)->text(),
                     mw::ui::formatCost(run.settings.objective.value(run.result.bestEvaluation)));
            QVERIFY(panel->searchedAnotherDesign(run));
            mw::SessionRun older = run; // a session saved before runs kept their design
            older.design.clear();
            QVERIFY(panel->searchedAnotherDesign(older)); // (its figure tells)
            QVERIFY(table->item(0, SearchPanel::ColFinal)->toolTip().startsWith("Re-costed"));
            QVERIFY(
                table->item(0, SearchPanel::ColStatus)->text().endsWith("(design since edited)"));
            QStringList curves;
            for (int i = 0; i < panel->plot()->graphCount(); ++i)
                curves << panel->plot()->graph(i)->name();
            QVERIFY2(curves.contains("random · seed 1 (earlier design)"),
                     qPrintable(curves.join(", ")));
        } else
            QVERIFY(!run.stale.empty());
    }

    // The searcher-figures column is sized to fit, until the user drags it:
    // then runs finishing keep the width the user chose.
    void draggedFiguresWidthStays() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        w.resize(1500, 950);
        w.show();
        QVERIFY(w.showView("search"));
        auto* panel = w.searchPanel();
        using mw::ui::SearchPanel;
        QTableWidget* table = panel->resultsTable();
        panel->setSearchers({"reinforce"}); // it reports figures (episodes)
        panel->setBudget(300, 0);
        QCOMPARE(panel->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        QVERIFY(!table->isColumnHidden(SearchPanel::ColFigures));
        // Fitted to its figures (not Qt's default width: hiding the column
        // while no run had figures must not pass for a drag).
        const int fitted = table->columnWidth(SearchPanel::ColFigures);
        QVERIFY2(fitted != table->horizontalHeader()->defaultSectionSize(),
                 qPrintable(QString::number(fitted)));
        table->horizontalHeader()->resizeSection(SearchPanel::ColFigures, fitted + 57);
        QCOMPARE(panel->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->columnWidth(SearchPanel::ColFigures), fitted + 57);
    }

    // Opening another session while a search runs stops it first: its best
    // joins the session it searched (which a save then holds), never the
    // session opened after it.
    void openingAnotherSessionStopsRunsFirst() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* panel = w.searchPanel();
        panel->setSearchers({"random"});
        panel->setBudget(0, 60.0);
        QCOMPARE(panel->runSelected(), 1);
        QVERIFY(w.unsavedWork().join(' ').contains("a search is running"));
        QVERIFY(w.settleSession("saving"));
        QCOMPARE(panel->runningCount(), 0);
        QCOMPARE(w.session().runs.size(), std::size_t(1)); // stopped, best kept here
        QVERIFY(w.session().runs[0].result.cancelled);
        QCOMPARE(panel->runSelected(), 1);
        const std::size_t fresh =
            mw::loadSession(MainWindow::defaultSessionPath().toStdString()).runs.size();
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        QCOMPARE(panel->runningCount(), 0);
        QTest::qWait(300); // (a run left going would report into the new session)
        QCOMPARE(w.session().runs.size(), fresh);
        QVERIFY(w.unsavedWork().isEmpty());
    }

    void cancelledRunKeepsBest() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* panel = w.searchPanel();
        panel->setSearchers({"gamma"});
        panel->setBudget(1'000'000'000, 0);
        QCOMPARE(panel->runSelected(), 1);
        QTest::qWait(400);
        panel->cancelAll();
        QVERIFY(w.waitForSearches(30000));
        QCOMPARE(w.session().runs.size(), std::size_t(1));
        const auto& r = w.session().runs[0].result;
        QVERIFY(r.cancelled);
        QVERIFY(r.found);
        QVERIFY(r.evaluations > 0 && r.evaluations < 1'000'000'000);
        QVERIFY(r.bestEvaluation.valid);
        QVERIFY(w.inspector()->hasMapping());
    }

    // Closing the window while searches run (one paused) and a network search
    // runs: nothing crashes, the runs stop with their best, and the session
    // with them is in the autosave.
    void closingDuringRunsKeepsTheSession() {
        QTemporaryDir autosave;
        auto w = std::make_unique<MainWindow>(testOptions(autosave.path()));
        QVERIFY(w->openSession(MainWindow::defaultSessionPath()));
        w->show();
        auto* panel = w->searchPanel();
        panel->setSearchers({"gamma", "annealing"});
        panel->setBudget(1'000'000'000, 0);
        panel->setThreads(2);
        QCOMPARE(panel->runSelected(), 2);
        panel->setRunPaused(panel->liveRuns().front(), true);
        w->networkView()->run();
        QTest::qWait(400);
        QTRY_VERIFY_WITH_TIMEOUT(w->networkView()->layerInProgress() >= 2, 120000); // one done
        const QString saved = w->autosavePath();
        QVERIFY(w->close());
        w.reset();
        QVERIFY(QFileInfo::exists(saved));
        const mw::Session s = mw::loadSession(saved.toStdString());
        // The two searches, and the layers the network search had finished
        // when it stopped (kept as runs: closing loses no work).
        int searches = 0;
        for (const auto& r : s.runs) {
            QVERIFY(r.finished);
            QVERIFY(r.result.found);
            searches += r.settings.budget.evaluations == 1'000'000'000;
        }
        QCOMPARE(searches, 2);
        QVERIFY(s.runs.size() > 2);
    }

    void pausesAndCancelsOneRun() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* panel = w.searchPanel();
        panel->setSearchers({"gamma", "random"});
        panel->setBudget(1'000'000'000, 0);
        QCOMPARE(panel->runSelected(), 2);
        const std::vector<int> ids = panel->liveRuns();
        QCOMPARE(ids.size(), std::size_t(2));
        QCOMPARE(panel->resultsTable()->rowCount(), 2); // the running searches are listed
        panel->setRunPaused(ids[0], true);
        QTest::qWait(300); // the paused run stops at its next progress report
        auto evaluationsOf = [&](int row) {
            return panel->resultsTable()
                ->item(row, mw::ui::SearchPanel::ColEvaluations)
                ->text()
                .toLongLong();
        };
        const qint64 pausedAt = evaluationsOf(0);
        QTest::qWait(300);
        QCOMPARE(evaluationsOf(0), pausedAt);
        QVERIFY(panel->resultsTable()
                    ->item(0, mw::ui::SearchPanel::ColStatus)
                    ->text()
                    .startsWith("paused"));
        panel->cancelRun(ids[0]); // cancelling a paused run ends it, best kept
        QTRY_COMPARE_WITH_TIMEOUT(panel->liveRuns().size(), std::size_t(1), 10000);
        QCOMPARE(panel->liveRuns().front(), ids[1]); // the other one runs on
        panel->cancelRun(ids[1]);
        QVERIFY(w.waitForSearches(10000));
        QCOMPARE(w.session().runs.size(), std::size_t(2));
        for (const auto& r : w.session().runs) {
            QVERIFY(r.result.cancelled);
            QVERIFY(r.result.found);
        }
    }

    // Mind Mappings without a surrogate trains one first: its row shows a
    // bar with the phase and the time left, and a cancel during training
    // keeps the best of the layer's training mappings.
    void showsPreparationAsProgress() {
        qputenv("MAPWRIGHT_MODEL_DIR", path("empty-models").toUtf8());
        qputenv("MAPWRIGHT_BUNDLED_MODELS", path("no-bundled").toUtf8());
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* panel = w.searchPanel();
        panel->setSearchers({"mind-mappings"});
        panel->setBudget(1'000'000'000, 0);
        QCOMPARE(panel->runSelected(), 1);
        QTableWidget* table = panel->resultsTable();
        auto bar = [&] {
            return qobject_cast<QProgressBar*>(
                table->cellWidget(table->rowCount() - 1, mw::ui::SearchPanel::ColFinal));
        };
        // Any training phase will do: under the sanitizers an epoch of the
        // default 100,000 samples can take close to a minute.
        QTRY_VERIFY_WITH_TIMEOUT(bar() && bar()->format().startsWith("training") &&
                                     bar()->format().contains("s left") && bar()->value() > 0,
                                 60000);
        QVERIFY(table->item(table->rowCount() - 1, mw::ui::SearchPanel::ColStatus)
                    ->text()
                    .startsWith("preparing"));
        panel->cancelAll();
        QVERIFY(w.waitForSearches(30000));
        qunsetenv("MAPWRIGHT_BUNDLED_MODELS");
        QCOMPARE(w.session().runs.size(), std::size_t(1));
        const auto& r = w.session().runs[0].result;
        QVERIFY(r.cancelled);
        QVERIFY(r.found && r.bestEvaluation.valid);
        QCOMPARE(r.stats.at("training_answer"), 1.0);
        QVERIFY(!bar()); // a finished row has no bar
    }

    void staysResponsiveWhileSearching() {
        // Two searches on 2 threads each for 2 s: progress reaches the GUI
        // thread, which keeps ticking and refreshing the plot. How long its
        // longest stall is, and how often the plot refreshes, depend on the
        // machine: `mapwright --bench-gui` reports them.
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const mw::ui::GuiResponsiveness r = mw::ui::measureResponsiveness(w);
        qInfo("GUI thread: longest gap %lld ms; plot refreshed %.1f times/s over %.2f s",
              r.longestGapMs, r.replotsPerSecond, r.seconds);
        QVERIFY(r.finished);
        QVERIFY(r.ticks > 1);
        QVERIFY(r.replots > 1);
    }

    void trainsSurrogateThenSearches() {
        qputenv("MAPWRIGHT_MODEL_DIR", path("models").toUtf8());
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        QVERIFY2(w.trainSurrogate(3000, 2, false), qPrintable(w.lastError()));
        QVERIFY(w.lastSurrogateReport().contains("rank correlation"));
        QVERIFY(!QDir(path("models")).entryList({"*.surrogate"}).isEmpty());
        auto* panel = w.searchPanel();
        panel->setSearchers({"mind-mappings", "reinforce", "cosa"});
        panel->setBudget(200, 0);
        QCOMPARE(panel->runSelected(), 3);
        QVERIFY(w.waitForSearches(120000));
        QCOMPARE(w.session().runs.size(), std::size_t(3));
        for (const auto& r : w.session().runs) {
            QVERIFY2(r.result.found, r.searcher.c_str());
            QVERIFY(r.result.bestEvaluation.valid);
        }
        // Each row shows its searcher's own figures, and the session keeps them.
        const QTableWidget* table = panel->resultsTable();
        const std::map<QString, QString> expected = {
            {"mind-mappings", "surrogate_steps"}, {"reinforce", "episodes"}, {"cosa", "mip_nodes"}};
        int checked = 0;
        for (int row = 0; row < table->rowCount(); ++row) {
            const QString searcher = table->item(row, 0)->text();
            const QString figures = table->item(row, table->columnCount() - 1)->text();
            QVERIFY2(figures.contains(expected.at(searcher)),
                     qPrintable(searcher + ": " + figures));
            ++checked;
        }
        QCOMPARE(checked, 3);
        QVERIFY(w.saveSession(path("figures.json")));
        const mw::Session back = mw::loadSession(path("figures.json").toStdString());
        QCOMPARE(back.runs.size(), std::size_t(3));
        for (std::size_t i = 0; i < back.runs.size(); ++i)
            QVERIFY(back.runs[i].result.stats == w.session().runs[i].result.stats &&
                    !back.runs[i].result.stats.empty());
        mw::Json edited = mw::readJsonFile(path("figures.json").toStdString());
        edited["runs"][0]["result"]["stats"]["episodes"] = "many";
        try {
            mw::sessionFromJson(edited, "figures.json");
            QFAIL("a non-numeric figure was accepted");
        } catch (const mw::InputError& e) {
            QVERIFY2(QString(e.what()).contains("figures.json: runs[0].result.stats.episodes") &&
                         QString(e.what()).contains("expected a number"),
                     e.what());
        }
        qunsetenv("MAPWRIGHT_MODEL_DIR");
    }

    // An ONNX model from the GUI: imported (a dynamic batch given), its
    // readable names in the workload and the network view, searched whole,
    // exported.
    void importsOnnxAndSearchesTheNetwork() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const QString onnx = kSource + "/tests/data/onnx/";
        const std::string before = sessionText(w.session());
        QVERIFY(!w.importNetwork(onnx + "dynamic_no_shapes.onnx")); // no batch, not interactive
        QVERIFY2(w.lastError().contains("dynamic batch 'N'"), qPrintable(w.lastError()));
        QVERIFY(!w.importNetwork(onnx + "activations_only.onnx"));
        QCOMPARE(sessionText(w.session()), before);
        // A Timeloop problem (a layer shape): one layer, what its import noted
        // in the status line; an architecture file is no problem, refused.
        const QString shapes = kSource + "/tests/data/timeloop-exercises/layer_shapes/";
        QVERIFY(!w.importNetwork(kSource + "/tests/data/timeloop-user/06-mapper-convlayer-eyeriss/"
                                           "arch.yaml"));
        QVERIFY2(w.lastError().contains("missing 'problem'"), qPrintable(w.lastError()));
        QCOMPARE(sessionText(w.session()), before);
        QVERIFY2(w.importNetwork(shapes + "mobilenet_v3/04.yaml"), qPrintable(w.lastError()));
        QCOMPARE(w.session().network.layers.size(), std::size_t(1));
        const mw::Problem shape = mw::buildProblem(w.session().network.layers[0]);
        QCOMPARE(shape.dims[std::size_t(shape.dimIndex("G"))].bound, std::int64_t(64));
        QVERIFY2(w.statusBar()->currentMessage().contains("HStride"),
                 qPrintable(w.statusBar()->currentMessage()));
        QVERIFY2(w.importNetwork(onnx + "dynamic_no_shapes.onnx", 4), qPrintable(w.lastError()));
        QCOMPARE(w.session().network.layers.size(), std::size_t(3));
        QCOMPARE(w.session().network.layers[0].param("N", 0), std::int64_t(4));
        QVERIFY2(w.importNetwork(onnx + "resnet18.onnx"), qPrintable(w.lastError()));
        const mw::Network& net = w.session().network;
        QCOMPARE(net.layers.size(), std::size_t(21));
        QCOMPARE(QString::fromStdString(net.layers[6].name), QString("layer2.0.conv2"));
        QCOMPARE(QString::fromStdString(net.layers[6].source),
                 QString("/layer2/layer2.0/conv2/Conv"));
        auto* view = w.networkView();
        view->setSearcher("gamma");
        view->setBudget(200);
        QVERIFY(view->run());
        QVERIFY(view->waitForFinished(120000));
        QCOMPARE(view->outcome().layers.size(), std::size_t(21));
        QCOMPARE(view->layerTable()->item(6, 0)->text(), QString("layer2.0.conv2"));
        QVERIFY(w.showView("network"));
        QVERIFY(w.exportPlot(path("resnet18-network.png")));
        QVERIFY(QFileInfo(path("resnet18-network.png")).size() > 1000);
        w.selectLayer(6);
        QVERIFY2(w.exportTimeloop(path("layer2.0.conv2")), qPrintable(w.lastError()));
        QVERIFY(QFileInfo::exists(path("layer2.0.conv2/problem.yaml")));
        QVERIFY(w.saveSession(path("resnet18-session.json")));
        QCOMPARE(
            mw::loadSession(path("resnet18-session.json").toStdString()).network.layers[6].source,
            std::string("/layer2/layer2.0/conv2/Conv"));
    }

    // A sweep of the session's design from the design-space view: points
    // live in the chart and the database, the front, hover figures; a click
    // opens a point's architecture (undoable) and its mappings as runs.
    void designSpaceSweepsAndOpensAPoint() {
        MainWindow w(testOptions(dir_.path()));
        mw::Session s;
        s.name = "sweep";
        s.arch = mw::loadArchitecture(
            (kSource + "/samples/architectures/eyeriss_like.json").toStdString());
        s.network = mw::test::twoConvs();
        w.setSession(s);
        auto* view = w.designView();
        QVERIFY(!view->axes().empty()); // a default sweep of this design
        view->setAxes({{"shared_glb.capacity_words", {"32768", "131072"}},
                       {"DRAM.class", {"LPDDR4", "HBM2"}}});
        view->setBudget(100);
        view->setThreads(2);
        const QString db = path("design.sqlite");
        view->setDatabasePath(db);
        QVERIFY2(view->run(), qPrintable(view->lastError()));
        QVERIFY(view->waitForFinished(120000));
        QCOMPARE(view->points().size(), std::size_t(4));
        QVERIFY(!view->front().empty());
        QCOMPARE(mw::SweepDatabase::open(db.toStdString()).points().size(), std::size_t(4));
        // The points table sorts by a column's numbers: capacity 32768 before
        // 131072 (as text, "131072" came first), then by EDP.
        QTableWidget* table = view->pointsTable();
        QCOMPARE(table->rowCount(), 4);
        table->sortItems(1, Qt::AscendingOrder);
        QCOMPARE(table->item(0, 1)->text(), QString("32768"));
        QCOMPARE(table->item(3, 1)->text(), QString("131072"));
        const int edpColumn = 1 + 2 + 2; // point, two axes, energy, cycles
        QCOMPARE(table->horizontalHeaderItem(edpColumn)->text(), QString("EDP"));
        table->sortItems(edpColumn, Qt::AscendingOrder);
        double lowest = 1e300;
        for (const auto& p : view->points())
            lowest = std::min(lowest, p.valid ? p.edp : 1e300);
        const int first = table->item(0, 0)->data(Qt::UserRole).toInt();
        QCOMPARE(view->points()[std::size_t(first)].edp, lowest);
        // Coloured by the first axis: its name once, each value in the legend.
        const auto* key = view->plot()->findChild<QCPTextElement*>("sweepColourKey");
        QVERIFY(key);
        QCOMPARE(key->text(), QString("colour: shared_glb.capacity_words"));
        QStringList entries;
        for (int i = 0; i < view->plot()->graphCount(); ++i)
            entries << view->plot()->graph(i)->name();
        QVERIFY2(entries.contains("32768") && entries.contains("131072"),
                 qPrintable(entries.join(", ")));
        QVERIFY(w.showView("design"));
        QVERIFY(w.exportPlot(path("design.png")));
        QVERIFY(QFileInfo(path("design.png")).size() > 1000);
        // Hover: the point under the cursor and its figures.
        view->plot()->replot();
        const std::size_t f = view->front().front();
        const mw::PointRecord& point = view->points()[f];
        const QPointF at(
            view->plot()->xAxis->coordToPixel(mw::metricValue(point, mw::SweepMetric::Energy)),
            view->plot()->yAxis->coordToPixel(mw::metricValue(point, mw::SweepMetric::Cycles)));
        QCOMPARE(view->pointAt(at), int(f));
        QVERIFY(view->pointSummary(int(f)).contains("on the Pareto front"));
        // Click: the point's design and mappings in the other views.
        const std::size_t runsBefore = w.session().runs.size();
        view->activatePoint(int(f));
        const mw::Architecture opened = mw::architectureFromJson(point.architecture);
        QCOMPARE(w.session().arch.levels[1].capacityWords, opened.levels[1].capacityWords);
        QCOMPARE(w.session().arch.levels[0].dramType, opened.levels[0].dramType);
        QCOMPARE(w.session().runs.size(), runsBefore + 2);
        QVERIFY(w.session().runs.back().result.bestEvaluation.valid);
        QCOMPARE(w.session().runs.back().result.bestEvaluation.energy, point.layers[1].energy);
        QCOMPARE(w.currentView(), QString("architecture"));
        w.undoStack()->undo();
        QCOMPARE(w.session().arch.levels[1].capacityWords, s.arch.levels[1].capacityWords);
        // The database reopened shows the same sweep.
        mw::ui::DesignSpaceView other;
        QVERIFY2(other.openResults(db), qPrintable(other.lastError()));
        QCOMPARE(other.points().size(), std::size_t(4));
        QCOMPARE(other.front(), view->front());
        QCOMPARE(other.axes().size(), std::size_t(2));
        QVERIFY(!other.openResults(path("design.png")));
        QVERIFY(other.lastError().contains("is not a Mapwright results database"));
        // A sweep that is not valid is refused before it starts.
        view->setAxes({{"glb.capacity_words", {"1024"}}});
        QVERIFY(!view->run());
        QVERIFY(view->lastError().contains("'glb' is not a level"));
        // Another sweep with the first one's database named: that file is
        // kept as it is and the new sweep writes its own, which it says.
        view->setAxes({{"shared_glb.capacity_words", {"65536"}}});
        QCOMPARE(view->databasePath(), db);
        QVERIFY2(view->run(), qPrintable(view->lastError()));
        QVERIFY(view->waitForFinished(120000));
        QCOMPARE(view->points().size(), std::size_t(1));
        QVERIFY(view->points().front().valid);
        QVERIFY(view->databasePath() != db);
        QVERIFY(view->statusText().contains("holds another sweep"));
        QCOMPARE(mw::SweepDatabase::open(db.toStdString()).points().size(), std::size_t(4));
        // Another session: the sweep shown was this one's.
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        QVERIFY(view->points().empty());
        QVERIFY(view->databasePath().isEmpty());
    }

    void networkViewSearchesEveryLayer() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* view = w.networkView();
        view->setSearcher("reinforce"); // it has figures of its own (episodes)
        view->setBudget(50);
        QVERIFY(view->run());
        QVERIFY(view->waitForFinished(120000));
        QVERIFY(view->hasOutcome());
        QCOMPARE(view->outcome().layers.size(), std::size_t(54));
        QVERIFY(view->outcome().energy > 0);
        QVERIFY(view->outcome().uniqueLayers < 54); // repeated layers searched once
        // The per-layer table: every layer, a time for searched ones, repeats named.
        const QTableWidget* table = view->layerTable();
        QCOMPARE(table->rowCount(), 54);
        int repeats = 0;
        for (int r = 0; r < table->rowCount(); ++r) {
            QCOMPARE(table->item(r, 0)->text().toStdString(), view->outcome().layers[r].name);
            if (table->item(r, 8)->text().startsWith("same as")) {
                ++repeats;
            } else {
                QVERIFY(table->item(r, 2)->text().toDouble() >= 0.0 &&
                        table->item(r, 2)->text() != "—");
                QVERIFY2(table->item(r, 7)->text().contains("episodes"),
                         qPrintable(table->item(r, 7)->text()));
            }
            if (view->outcome().layers[r].result.found) // never below the bound
                QVERIFY(table->item(r, 6)->text().toDouble() >= 1.0);
            else
                QCOMPARE(table->item(r, 6)->text(), QString("—"));
        }
        QCOMPARE(repeats, 54 - view->outcome().uniqueLayers);
        QVERIFY(!table->isColumnHidden(7));
        // The outcome is the view's until kept: closing would drop it, and says so.
        QVERIFY(w.unsavedWork().join(' ').contains("Network view's results"));
        QPushButton* keep = nullptr;
        for (QPushButton* b : view->findChildren<QPushButton*>())
            if (b->text() == "Keep as runs")
                keep = b;
        QVERIFY(keep && keep->isEnabled());
        const std::size_t before = w.session().runs.size();
        keep->click();
        const std::vector<mw::SessionRun> kept(w.session().runs.begin() + std::ptrdiff_t(before),
                                               w.session().runs.end());
        QCOMPARE(int(kept.size()), view->outcome().uniqueLayers); // every layer found one
        for (const mw::SessionRun& r : kept) {
            QCOMPARE(r.searcher, std::string("reinforce"));
            QVERIFY(r.finished && r.result.found && r.stale.empty());
            QCOMPARE(r.settings.budget.evaluations, std::int64_t(50));
        }
        QCOMPARE(kept.front().result.bestCost, view->outcome().layers.front().result.bestCost);
        QVERIFY(!keep->isEnabled());
        QVERIFY(!w.unsavedWork().join(' ').contains("Network view's results"));
        // An edit of the design: the outcome shown is said to be of the old one.
        QVERIFY(!view->outcomeStale());
        mw::Architecture bigger = w.session().arch;
        bigger.levels[1].capacityWords *= 2;
        QVERIFY(w.architectureEditor()->applyEdit(bigger, "bigger buffer"));
        QVERIFY(view->outcomeStale());
        w.undoStack()->undo();
        QVERIFY(!view->outcomeStale());
        // GAMMA has no figures of its own: the empty column gives the note its width.
        view->setSearcher("gamma");
        QVERIFY(view->run());
        QVERIFY(view->waitForFinished(120000));
        QVERIFY(table->isColumnHidden(7));
    }
};

QTEST_MAIN(TestGuiRuns)
#include "test_gui_runs.moc"
