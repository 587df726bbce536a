// The explorer GUI, offscreen: the default session opens; editors validate
// and undo, and estimates follow their edits; Timeloop files, Jinja2 top
// files and sessions open and round-trip; bundled samples stay read-only;
// exports and the scripted screenshot work; bad input changes nothing.
// (Searches, design points and networks: test_gui_runs.)
#include "gui_support.h"

#include <QStatusBar>

using namespace mw::gui_test;

// Types `value` into the field of level `level` that shows `shown`, as a user
// would (focus, select, keys), without Enter; the field, or null if none.
QLineEdit* typeIntoField(MainWindow& w, int level, const QString& shown, qint64 value) {
    w.showView("architecture");
    w.architectureEditor()->selectLevel(level);
    QLineEdit* field = nullptr;
    for (QLineEdit* e : w.architectureEditor()->findChildren<QLineEdit*>())
        if (e->isVisible() && e->text() == shown)
            field = e;
    if (!field)
        return nullptr;
    QApplication::setActiveWindow(&w);
    field->setFocus();
    field->selectAll();
    QTest::keyClicks(field, QString::number(value));
    return field;
}

class TestGui : public GuiTest {
    Q_OBJECT
  private slots:
    void initTestCase() { prepareScratch(); }

    void opensDefaultSession() {
        MainWindow w(testOptions(dir_.path()));
        const QString def = MainWindow::defaultSessionPath();
        QVERIFY2(!def.isEmpty(), "samples/sessions/default.json not found");
        QVERIFY2(w.openSession(def), qPrintable(w.lastError()));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.session().network.layers.size(), std::size_t(54)); // ResNet-50
        QCOMPARE(QString::fromStdString(w.session().arch.name), QString("eyeriss-like"));
        QVERIFY(w.windowTitle().startsWith("Mapwright"));
        QCOMPARE(w.architectureEditor()->architecture().numLevels(), w.session().arch.numLevels());
        QCOMPARE(w.workloadEditor()->network().layers.size(), std::size_t(54));
        QVERIFY(!w.architectureEditor()->scene()->items().isEmpty()); // the hierarchy is drawn
        for (const QString& v : MainWindow::viewNames())
            QVERIFY(w.showView(v));
        QVERIFY(!w.showView("nonsense"));
    }

    void editsLevelWithUndo() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* editor = w.architectureEditor();
        const int glb = w.session().arch.levelIndex("shared_glb");
        QVERIFY(glb > 0);
        const auto before = w.session().arch.levels[std::size_t(glb)].capacityWords;
        editor->selectLevel(glb);
        QVERIFY2(editor->setLevelField("capacity", QString::number(before * 2)),
                 qPrintable(editor->lastError()));
        QCOMPARE(w.session().arch.levels[std::size_t(glb)].capacityWords, before * 2);
        QVERIFY(w.undoStack()->canUndo());
        w.undoStack()->undo();
        QCOMPARE(w.session().arch.levels[std::size_t(glb)].capacityWords, before);
        w.undoStack()->redo();
        QCOMPARE(w.session().arch.levels[std::size_t(glb)].capacityWords, before * 2);
        // The PE array changes in one edit (14 x 12 -> 16 x 16), every PE level with it.
        QVERIFY2(editor->setPeArray(16, 16), qPrintable(editor->lastError()));
        QCOMPARE(w.session().arch.compute.instances(), std::int64_t(256));
        const int spad = w.session().arch.levelIndex("weights_spad");
        QCOMPARE(w.session().arch.levels[std::size_t(spad)].instances(), std::int64_t(256));
        QVERIFY(!editor->setPeArray(0, 4));
        QCOMPARE(w.session().arch.compute.instances(), std::int64_t(256));
        w.undoStack()->undo();
        QCOMPARE(w.session().arch.compute.instances(), std::int64_t(168));
        // A search on the edited architecture uses it.
        QVERIFY(editor->setPeArray(16, 16));
        w.searchPanel()->setSearchers({"random"});
        w.searchPanel()->setBudget(300, 0);
        QCOMPARE(w.searchPanel()->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        QVERIFY(w.session().runs.at(0).result.bestEvaluation.valid);
        QCOMPARE(w.inspector()->evaluation().utilizedMacs <= 256, true);
    }

    void badArchitectureInputChangesNothing() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* editor = w.architectureEditor();
        const std::string original = mw::toJson(w.session().arch).dump();
        const int glb = w.session().arch.levelIndex("shared_glb");
        editor->selectLevel(glb);
        QVERIFY(!editor->setLevelField("capacity", "lots"));
        QVERIFY2(editor->lastError().contains("capacity"), qPrintable(editor->lastError()));
        QVERIFY(!editor->setLevelField("capacity", "0"));
        QVERIFY(!editor->lastError().isEmpty());
        QVERIFY(!editor->setLevelField("mesh_x", "-3"));
        // Deleting the compute level is refused.
        QVERIFY(!editor->removeLevel(w.session().arch.numLevels()));
        QVERIFY(!editor->lastError().isEmpty());
        QCOMPARE(mw::toJson(w.session().arch).dump(), original);
        QCOMPARE(mw::toJson(editor->architecture()).dump(), original);
    }

    // Estimated energies and areas follow every edit; typed ones stay until
    // unpinned; the totals (on-chip area, the best mapping's energy per MAC)
    // follow at once.
    void estimatesFollowEdits() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* editor = w.architectureEditor();
        const int glb = w.session().arch.levelIndex("shared_glb");
        editor->selectLevel(glb);
        auto level = [&] { return w.session().arch.levels[std::size_t(glb)]; };
        // The sample's values come from the tutorial's ERT: pinned, estimate beside.
        QVERIFY(level().sources.read == mw::ValueSource::Imported);
        const double imported = level().energy.read;
        QVERIFY(editor->estimate().has_value());
        const double estimate = editor->estimate()->levels[std::size_t(glb)].energy.read;
        QVERIFY(std::abs(estimate - imported) < 0.3 * imported); // Accelergy within 30 %
        QVERIFY2(editor->unpinAll(), qPrintable(editor->lastError()));
        QCOMPARE(level().energy.read, estimate);
        QVERIFY(level().sources.area == mw::ValueSource::Estimated);
        // Doubling the buffer costs energy per access and area.
        const double area = level().area;
        const QString status = editor->statusText();
        QVERIFY2(status.contains("On-chip area"), qPrintable(status));
        QVERIFY(editor->setLevelField("capacity", QString::number(level().capacityWords * 2)));
        QVERIFY(level().energy.read > estimate * 1.1);
        QVERIFY(level().area > area * 1.5);
        QVERIFY(editor->statusText() != status);
        // A typed value stays through edits until unpinned.
        QVERIFY(editor->setLevelField("read_energy", "3.5"));
        QVERIFY(level().sources.read == mw::ValueSource::Typed);
        QVERIFY(editor->setLevelField("capacity", QString::number(level().capacityWords / 4)));
        QCOMPARE(level().energy.read, 3.5);
        QVERIFY(editor->unpin("read_energy"));
        QVERIFY(level().energy.read < estimate && level().energy.read > 0);
        QVERIFY(!editor->unpin("capacity")); // not an estimated quantity
        // The technology node prices everything estimated.
        const double at32 = level().energy.read;
        QVERIFY2(editor->setTechnology("16"), qPrintable(editor->lastError()));
        QVERIFY(level().energy.read < 0.6 * at32);
        QVERIFY(!editor->setTechnology("3"));
        QVERIFY2(editor->lastError().contains("outside the estimator's 7 to 130 nm"),
                 qPrintable(editor->lastError()));
        QCOMPARE(w.session().arch.technologyNm, 16.0);
        // The MAC: its format and widths price it.
        editor->selectLevel(w.session().arch.numLevels());
        QVERIFY(editor->unpinAll());
        const double int8 = w.session().arch.compute.macEnergy;
        QVERIFY2(editor->setLevelField("arithmetic", "fp"), qPrintable(editor->lastError()));
        QVERIFY(!editor->setLevelField("multiplier_bits", "12")); // no fp12
        QVERIFY(editor->lastError().contains("fp12 is not a format"));
        QVERIFY(editor->setLevelField("multiplier_bits", "16"));
        QVERIFY(w.session().arch.compute.macEnergy > int8);
        // A search's best mapping: its energy per MAC follows the architecture.
        w.searchPanel()->setSearchers({"random"});
        w.searchPanel()->setBudget(300, 0);
        QCOMPARE(w.searchPanel()->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        const QString withRun = editor->statusText();
        QVERIFY2(withRun.contains("pJ/MAC"), qPrintable(withRun));
        QVERIFY(editor->setLevelField("mac_energy", "9"));
        QVERIFY(editor->statusText() != withRun);
        // The energy view shows the areas.
        w.showView("energy");
        QVERIFY(w.energyView()->areaPlot()->plottableCount() > 0);
    }

    // Timeloop files as a user writes them open as a session: estimated
    // architecture, the problem as a layer, the constraints in the search
    // panel (and every run under them), the mapping as a run; exported back
    // as a Timeloop case.
    void opensAndExportsTimeloopFiles() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const QString user = kSource + "/tests/data/timeloop-user/06-mapper-convlayer-eyeriss/";
        const QString ref = kSource + "/tests/data/timeloop-tutorial/06-mapper-convlayer-eyeriss/";
        const std::string before = sessionText(w.session());
        // A contradictory constraint: refused, the session stays.
        const QString bad = path("bad-constraints.yaml");
        mw::writeTextFile(bad.toStdString(),
                          "architecture_constraints:\n  targets:\n  - {target: weights_spad, "
                          "type: temporal, factors: P=3}\n");
        QVERIFY(!w.openTimeloop({user + "arch.yaml", user + "problem.yaml", bad}));
        QVERIFY2(w.lastError().contains("contradictory constraints"), qPrintable(w.lastError()));
        QCOMPARE(sessionText(w.session()), before);
        QVERIFY2(
            w.openTimeloop({user + "arch.yaml", user + "problem.yaml", user + "constraints.yaml",
                            user + "mapper.yaml", ref + "map.yaml"}),
            qPrintable(w.lastError()));
        const mw::Session& s = w.session();
        QCOMPARE(s.network.layers.size(), std::size_t(1));
        QCOMPARE(s.arch.technologyNm, 32.0);
        QVERIFY(s.arch.levels[1].sources.read == mw::ValueSource::Estimated);
        QVERIFY(!s.constraints.is_null());
        QCOMPARE(w.searchPanel()->constraints(), s.constraints);
        const mw::Json importedConstraints = s.constraints; // (s follows the session)
        QCOMPARE(s.runs.size(), std::size_t(1)); // the mapping; the mapper's run is requested
        QCOMPARE(s.runs[0].searcher, std::string(mw::kImportedRun));
        // The autosave holds the requested run too, as a save does: a crash
        // before it runs does not lose what the mapper file asked for.
        QVERIFY(w.autosaveNow());
        const mw::Session autosaved = mw::loadSession(w.autosavePath().toStdString());
        QCOMPARE(autosaved.runs.size(), std::size_t(2));
        QVERIFY(!autosaved.runs[1].finished);
        QVERIFY(s.runs[0].result.bestEvaluation.valid);
        QCOMPARE(s.runs[0].result.bestEvaluation.cycles, std::int64_t(5505024));
        // A run from the panel searches the constrained space.
        w.searchPanel()->setSearchers({"random-pruned"});
        w.searchPanel()->setBudget(400, 0);
        QCOMPARE(w.searchPanel()->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        const mw::SessionRun& run = w.session().runs.back();
        QCOMPARE(run.constraints, s.constraints);
        const mw::Problem p = mw::buildProblem(s.network.layers[0]);
        const mw::MapSpace space(p, s.arch, mw::constraintsFromJson(s.constraints, p, s.arch));
        QVERIFY(run.result.found);
        QVERIFY(space.meetsConstraints(run.result.best));
        // Export: the whole case, for timeloop-model and timeloop-mapper.
        w.inspector()->showRun(0);
        const QString out = path("timeloop-export");
        QVERIFY2(w.exportTimeloop(out), qPrintable(w.lastError()));
        for (const char* f : {"arch.yaml", "problem.yaml", "mapping.yaml", "ERT.yaml", "ART.yaml",
                              "constraints.yaml", "mapper.yaml"})
            QVERIFY2(QFileInfo::exists(out + "/" + f), f);
        const mw::TimeloopCase back = mw::importTimeloop(
            {(out + "/arch.yaml").toStdString(), (out + "/problem.yaml").toStdString(),
             (out + "/mapping.yaml").toStdString(), (out + "/constraints.yaml").toStdString(),
             (out + "/ERT.yaml").toStdString(), (out + "/ART.yaml").toStdString()});
        QCOMPARE(mw::evaluate(back.problem, back.arch, back.mapping).energy,
                 s.runs[0].result.bestEvaluation.energy);
        // Constraints from the panel: loaded (ours, Timeloop's), refused
        // when contradictory (those loaded stay), then cleared.
        QVERIFY(w.searchPanel()->loadConstraints(
            kSource + "/samples/constraints/eyeriss_row_stationary.json"));
        QVERIFY(!w.session().constraints.is_null());
        QVERIFY2(w.searchPanel()->loadConstraints(user + "constraints.yaml"),
                 qPrintable(w.searchPanel()->lastError()));
        mw::Json fromYaml = w.searchPanel()->constraints();
        fromYaml.erase("description");
        mw::Json imported = importedConstraints;
        imported.erase("description");
        QCOMPARE(fromYaml, imported);
        const mw::Json loaded = w.searchPanel()->constraints();
        QVERIFY(!w.searchPanel()->loadConstraints(bad));
        QVERIFY2(w.searchPanel()->lastError().contains("contradictory constraints"),
                 qPrintable(w.searchPanel()->lastError()));
        QCOMPARE(w.searchPanel()->constraints(), loaded);
        // What the import noted reaches the status line: a node design's
        // constraints read against a GEMM drop the convolution's names.
        const QString nodes = kSource + "/tests/data/timeloop-exercises/example_designs/"
                                        "simple_weight_stationary/arch.yaml";
        QVERIFY(w.openTimeloop(
            {nodes, kSource + "/tests/data/timeloop-exercises/layer_shapes/MM/ResNet50_repr/"
                              "M512-K128-N1024.yaml"}));
        QVERIFY2(w.searchPanel()->loadConstraints(nodes), qPrintable(w.searchPanel()->lastError()));
        QVERIFY2(w.statusBar()->currentMessage().contains("which the problem does not have"),
                 qPrintable(w.statusBar()->currentMessage()));
        w.searchPanel()->setConstraints(mw::Json());
        QVERIFY(w.searchPanel()->constraints().is_null());
    }

    // The exercises' Jinja2 top file: without its parse data (and no one to
    // ask) it is refused by name and the session stays; with it, the v0.4
    // node design opens (its levels, the layer's stride, its constraints).
    void opensAJinjaTopFile() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const std::string before = sessionText(w.session());
        const QString top =
            kSource + "/tests/data/timeloop-exercises/example_designs/top.yaml.jinja2";
        QVERIFY(!w.openTimeloop({top}));
        QVERIFY2(w.lastError().contains("'architecture' is undefined; expected it in the parse "
                                        "data"),
                 qPrintable(w.lastError()));
        QCOMPARE(sessionText(w.session()), before);
        QVERIFY2(w.openTimeloop({top}, {{"architecture", "eyeriss_like"}}),
                 qPrintable(w.lastError()));
        const mw::Session& s = w.session();
        QVERIFY(s.arch.levelIndex("inter_PE_spatial") >= 0);
        QCOMPARE(s.arch.compute.meshX * s.arch.compute.meshY, 168);
        QVERIFY(!s.constraints.is_null());
        // The default layer is strided: Inputs span 3 x 225 x 225 words, not 3 x 114 x 114.
        const mw::Problem p = mw::buildProblem(s.network.layers.front());
        QCOMPARE(p.touchedElements(p.tensorIndex("Inputs")), std::int64_t(3 * 225 * 225));
    }

    void badWorkloadInputChangesNothing() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        auto* editor = w.workloadEditor();
        const std::string original = mw::toJson(w.session().network).dump();
        QVERIFY(!editor->setCell(0, "C", "three"));
        QVERIFY2(editor->lastError().contains("C") &&
                     editor->lastError().contains("is 'three'; expected a positive integer"),
                 qPrintable(editor->lastError()));
        // A long paste is quoted cut short.
        QVERIFY(!editor->setCell(0, "C", QString(40, 'x')));
        QVERIFY2(editor->lastError().contains("is '" + QString(24, 'x') + QString::fromUtf8("…'")),
                 qPrintable(editor->lastError()));
        QVERIFY(!editor->setCell(0, "M", "0"));
        QVERIFY(!editor->setCell(0, "P", "-7"));
        QCOMPARE(mw::toJson(w.session().network).dump(), original);
        // A good edit goes through.
        QVERIFY2(editor->setCell(0, "M", "32"), qPrintable(editor->lastError()));
        QCOMPARE(w.session().network.layers[0].param("M", 0), std::int64_t(32));
        QVERIFY(editor->addPresetLayer("gemm"));
        QCOMPARE(w.session().network.layers.size(), std::size_t(55));
    }

    // Issue 31, item 7: Save on a bundled sample asks where to save it; the
    // sample stays as shipped (it is put back if a regression wrote it).
    void bundledSamplesAreReadOnly() {
        const QString sample = MainWindow::defaultSessionPath();
        QFile in(sample);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray shipped = in.readAll();
        in.close();
        const auto restore = qScopeGuard([&] {
            QFile out(sample);
            if (out.open(QIODevice::ReadOnly) && out.readAll() != shipped) {
                out.close();
                if (out.open(QIODevice::WriteOnly | QIODevice::Truncate))
                    out.write(shipped);
            }
        });
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(MainWindow::isBundledSample(sample));
        QVERIFY(!MainWindow::isBundledSample(dir_.filePath("mine.json")));
        QVERIFY(w.openSession(sample));
        QVERIFY(w.windowTitle().contains("read-only"));
        QVERIFY(w.workloadEditor()->setCell(0, "M", "32")); // something to save
        QAction* save = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->shortcut() == QKeySequence(QKeySequence::Save))
                save = a;
        QVERIFY(save);
        bool asked = false;
        QTimer answer; // the file dialog: cancelled
        connect(&answer, &QTimer::timeout, &w, [&] {
            if (QWidget* dialog = QApplication::activeModalWidget()) {
                asked = qobject_cast<QFileDialog*>(dialog) != nullptr;
                if (auto* d = qobject_cast<QDialog*>(dialog))
                    d->reject();
            }
        });
        answer.start(50);
        save->trigger();
        answer.stop();
        QVERIFY(asked);
        QFile after(sample);
        QVERIFY(after.open(QIODevice::ReadOnly));
        QVERIFY2(after.readAll() == shipped, "the bundled session was overwritten");
        QCOMPARE(w.sessionPath(), sample);
    }

    // A value typed but not yet committed (no Enter, the focus still in the
    // field) is what a save, a run or a close takes: they move no focus.
    void typedValueIsSavedWithoutEnter() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const int glb = w.session().arch.levelIndex("shared_glb");
        const auto before = w.session().arch.levels[std::size_t(glb)].capacityWords;
        QLineEdit* field = typeIntoField(w, glb, QString::number(before), before * 2);
        QVERIFY(field);
        QCOMPARE(w.session().arch.levels[std::size_t(glb)].capacityWords, before); // not yet
        const QString file = path("typed.session.json");
        QVERIFY(w.saveSession(file));
        QCOMPARE(mw::loadSession(file.toStdString()).arch.levels[std::size_t(glb)].capacityWords,
                 before * 2);
        QVERIFY(field->hasFocus()); // the user goes on where they were
    }

    // Issue 31, item 8: Ctrl+Z in the field just edited (its edit committed)
    // undoes the session's edit, not nothing.
    void undoFromTheFieldJustEdited() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const int glb = w.session().arch.levelIndex("shared_glb");
        const auto before = w.session().arch.levels[std::size_t(glb)].capacityWords;
        QLineEdit* field = typeIntoField(w, glb, QString::number(before), before * 2);
        QVERIFY(field);
        QTest::keyClick(field, Qt::Key_Return); // commits
        QCOMPARE(w.session().arch.levels[std::size_t(glb)].capacityWords, before * 2);
        QVERIFY(field->hasFocus());
        QTest::keyClick(field, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(w.session().arch.levels[std::size_t(glb)].capacityWords, before);
    }

    void inspectorEditsReevaluate() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        w.searchPanel()->setSearchers({"random"});
        w.searchPanel()->setBudget(500, 0);
        QCOMPARE(w.searchPanel()->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        auto* inspector = w.inspector();
        QVERIFY(inspector->hasMapping());
        const mw::Mapping before = inspector->mapping();
        // Text in a factor field is refused and changes nothing.
        QVERIFY(!inspector->setFactor(0, "M", "temporal", "many"));
        QVERIFY(inspector->lastError().contains("M"));
        QCOMPARE(std::memcmp(&before, &inspector->mapping(), sizeof(mw::Mapping)), 0);
        // Doubling a DRAM factor breaks the product: re-evaluated, violations listed.
        const int m = inspector->problem().dimIndex("M");
        const auto f = before.levels[0].temporal[std::size_t(m)];
        QVERIFY(inspector->setFactor(0, "M", "temporal", QString::number(f * 2)));
        QVERIFY(!inspector->evaluation().valid);
        inspector->resetEdits();
        QVERIFY(inspector->evaluation().valid);
        // A bad loop order is refused.
        QVERIFY(!inspector->setOrder(0, "M M M"));
    }

    // Hand edits in the inspector are the user's: a search finishing does not
    // replace them with its best, an architecture edit re-costs them, and a
    // layer reshaped under them discards them with a message.
    void inspectorEditsSurviveRunsAndEdits() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        w.searchPanel()->setSearchers({"random"});
        w.searchPanel()->setBudget(500, 0);
        QCOMPARE(w.searchPanel()->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        auto* inspector = w.inspector();
        QVERIFY(inspector->hasMapping());
        QVERIFY(!inspector->hasEdits());
        QStringList reversed;
        for (const mw::Dimension& d : inspector->problem().dims)
            reversed.prepend(QString::fromStdString(d.name));
        QVERIFY(inspector->setOrder(0, reversed.join(' ')));
        QVERIFY(inspector->hasEdits());
        QVERIFY(w.unsavedWork().join(' ').contains("hand-edited mapping"));
        const mw::Mapping edited = inspector->mapping();
        // A better run finishes: the inspector stays on the edited mapping.
        w.searchPanel()->setSearchers({"gamma"});
        w.searchPanel()->setBudget(3000, 0);
        QCOMPARE(w.searchPanel()->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        QCOMPARE(w.session().runs.size(), std::size_t(2));
        QCOMPARE(inspector->currentRun(), 0);
        QVERIFY(inspector->hasEdits());
        QVERIFY(mw::sameMapping(inspector->mapping(), edited));
        // An architecture edit: the same loops, costed on the new hardware.
        mw::Architecture slower = w.session().arch;
        slower.levels[0].readBandwidth = 0.25;
        const std::int64_t cyclesBefore = inspector->evaluation().cycles;
        QVERIFY(w.architectureEditor()->applyEdit(slower, "slower DRAM"));
        QVERIFY(mw::sameMapping(inspector->mapping(), edited));
        const mw::Evaluation expected =
            mw::evaluate(inspector->problem(), w.session().arch, edited);
        QCOMPARE(inspector->evaluation().cycles, expected.cycles);
        QVERIFY(inspector->evaluation().cycles > cyclesBefore);
        // The layer reshaped: the loops no longer fit it, and that is said.
        const int layer = w.session().network.layerIndex(w.session().runs[0].layer);
        const std::int64_t c = w.session().network.layers[std::size_t(layer)].param("C", 0);
        QVERIFY(w.workloadEditor()->setCell(layer, "C", QString::number(c / 2)));
        QVERIFY(!inspector->hasEdits());
        QVERIFY(inspector->lastError().startsWith("Hand edits set aside"));
        QVERIFY(w.unsavedWork().join(' ').contains("hand-edited mapping"));
        // A run finishing meanwhile does not take the inspector off their run,
        // so undoing the reshape brings them back.
        QCOMPARE(w.searchPanel()->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        QCOMPARE(inspector->currentRun(), 0);
        w.undoStack()->undo();
        QVERIFY(inspector->hasEdits());
        QVERIFY(mw::sameMapping(inspector->mapping(), edited));
        QVERIFY(inspector->lastError().startsWith("Hand edits restored"));
        // Another session: edits of this one's run do not pass to a run of
        // the same index and shape there.
        const QString file = path("edited.session.json"); // the same runs, reopened
        QVERIFY(w.saveSession(file));
        QVERIFY(w.openSession(file));
        QVERIFY(inspector->hasMapping());
        QVERIFY(!inspector->hasEdits());
    }

    // Windows open side by side autosave to files of their own (one wrote
    // over the other's every 30 s), and a window whose process is gone
    // without closing cleanly leaves its autosave to be offered back.
    void windowsAutosaveApartAndCrashesAreFound() {
        QTemporaryDir autosave;
        const auto options = testOptions(autosave.path());
        MainWindow a(options), b(options);
        QVERIFY(a.autosavePath() != b.autosavePath());
        QVERIFY(a.autosaveNow() && b.autosaveNow());
        QVERIFY(a.crashedAutosaves().isEmpty());
        QString lost;
        {
            MainWindow c(options);
            QVERIFY(c.autosaveNow());
            lost = c.autosavePath();
            // Its "running" marker, as a start writes it; no clean exit.
            QFile marker(QString(lost).replace(".session.json", ".running"));
            QVERIFY(marker.open(QIODevice::WriteOnly));
        } // (its lock goes with it, as with a process that died)
        QCOMPARE(a.crashedAutosaves(), QStringList{lost});
        QCOMPARE(b.crashedAutosaves(), QStringList{lost});
        // A window starting now passes over the crashed slot, whose autosave
        // waits to be offered, rather than write over it.
        MainWindow d(options);
        QVERIFY(d.autosavePath() != lost);
        QVERIFY(d.autosaveNow());
        QCOMPARE(d.crashedAutosaves(), QStringList{lost});
        // Declined, it is kept aside where no autosave writes (the slot's
        // next autosave once wrote over it), and not offered again.
        auto readAll = [](const QString& file) {
            QFile f(file);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray lostText = readAll(lost);
        const QString kept = d.settleCrashedAutosave(lost, false);
        QVERIFY(kept != lost && QFileInfo(kept).fileName().startsWith("autosave-declined-"));
        QCOMPARE(readAll(kept), lostText);
        QVERIFY(!QFileInfo::exists(lost));
        QVERIFY(d.crashedAutosaves().isEmpty());
        QVERIFY(d.statusBar()->currentMessage().contains(kept));
        QVERIFY2(d.openSession(kept), qPrintable(d.lastError()));
        // One it cannot restore is kept the same way (its slot's next window
        // would write over it).
        QString broken;
        {
            MainWindow e(options);
            broken = e.autosavePath();
            QFile file(broken);
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write("{\"format\": \"mapwright.session\", \"version\": ");
            file.close();
            QFile marker(QString(broken).replace(".session.json", ".running"));
            QVERIFY(marker.open(QIODevice::WriteOnly));
        }
        const QString keptBroken = d.settleCrashedAutosave(broken, true);
        QVERIFY(!keptBroken.isEmpty() && keptBroken != kept);
        QVERIFY(readAll(keptBroken).endsWith("\"version\": "));
        QVERIFY(d.crashedAutosaves().isEmpty());
    }

    void sessionRoundTrips() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        w.searchPanel()->setSearchers({"annealing", "genetic"});
        w.searchPanel()->setBudget(800, 0);
        QCOMPARE(w.searchPanel()->runSelected(), 2);
        QVERIFY(w.waitForSearches(60000));
        const QString file = path("round.session.json");
        QVERIFY(w.saveSession(file));
        MainWindow again(testOptions(dir_.path()));
        QVERIFY2(again.openSession(file), qPrintable(again.lastError()));
        QCOMPARE(sessionText(again.session()), sessionText(w.session()));
        QCOMPARE(again.searchPanel()->resultsTable()->rowCount(), 2);
        // The design each run searched reads back as this design's.
        for (const mw::SessionRun& r : again.session().runs) {
            QVERIFY(!r.design.empty());
            QVERIFY(!again.searchPanel()->searchedAnotherDesign(r));
        }
        QVERIFY(again.inspector()->hasMapping());
        // Autosave writes the same session where crash recovery looks for it.
        QVERIFY(w.autosaveNow());
        QCOMPARE(sessionText(mw::loadSession(w.autosavePath().toStdString())),
                 sessionText(w.session()));
    }

    void badSessionFileKeepsCurrent() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        const std::string before = sessionText(w.session());
        QFile bad(path("bad.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"format\": \"mapwright.session\", \"architecture\": ");
        bad.close();
        QVERIFY(!w.openSession(path("bad.json")));
        QVERIFY2(w.lastError().contains("bad.json"), qPrintable(w.lastError()));
        QCOMPARE(sessionText(w.session()), before);
        // The file is kept as it was, and with an autosave at hand it is offered.
        QVERIFY(bad.open(QIODevice::ReadOnly));
        QCOMPARE(bad.readAll(),
                 QByteArray("{\"format\": \"mapwright.session\", \"architecture\": "));
        bad.close();
        QVERIFY(w.autosaveNow());
        QVERIFY(!w.openSession(path("bad.json")));
        QVERIFY2(w.lastError().contains(w.autosavePath()), qPrintable(w.lastError()));
        QVERIFY(!w.openSession(path("missing.json")));
        QCOMPARE(sessionText(w.session()), before);
    }

    void exportsFiles() {
        MainWindow w(testOptions(dir_.path()));
        QVERIFY(w.openSession(MainWindow::defaultSessionPath()));
        w.show();
        w.searchPanel()->setSearchers({"gamma"});
        w.searchPanel()->setBudget(600, 0);
        QCOMPARE(w.searchPanel()->runSelected(), 1);
        QVERIFY(w.waitForSearches(60000));
        QVERIFY(w.exportMapping(path("best.json")));
        QVERIFY(w.exportMapping(path("best.yaml")));
        QVERIFY(w.exportTraces(path("traces.csv")));
        w.showView("search");
        QVERIFY(w.exportPlot(path("convergence.png")));
        QVERIFY(w.exportPlot(path("convergence.pdf")));
        w.showView("energy");
        QVERIFY(w.exportPlot(path("energy.png")));
        // A view without a chart says so instead of saving another view's.
        w.showView("inspector");
        QVERIFY(!w.exportPlot(path("inspector.png")));
        QVERIFY2(w.lastError().contains("no chart"), qPrintable(w.lastError()));
        QVERIFY(!QFileInfo::exists(path("inspector.png")));
        QVERIFY(QImage(path("convergence.png")).width() >= 1200); // full size, whatever the widget
        for (const char* f :
             {"best.yaml", "traces.csv", "convergence.png", "convergence.pdf", "energy.png"})
            QVERIFY2(QFileInfo(path(f)).size() > 100, f);
        // The exported mapping reads back as the same, legal mapping.
        const mw::Problem& p = w.inspector()->problem();
        const mw::Mapping m = mw::loadMapping(path("best.json").toStdString(), p, w.session().arch);
        QVERIFY(mw::evaluate(p, w.session().arch, m).valid);
        QCOMPARE(mw::evaluate(p, w.session().arch, m).edp, w.inspector()->evaluation().edp);
        QFile csv(path("traces.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QVERIFY(csv.readLine().startsWith("run,searcher,seed,layer,evaluation"));
    }

    void scriptedScreenshot() {
        const QString out = path("shot.png");
        QProcess gui;
        gui.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
        // The session asks for 8 runs; they run before the view is rendered.
        gui.start(MAPWRIGHT_GUI, {"--session", kSource + "/samples/sessions/compare_searchers.json",
                                  "--screenshot", out, "--view", "search"});
        QVERIFY(gui.waitForFinished(120000));
        QCOMPARE(gui.exitCode(), 0);
        const QString said = gui.readAllStandardOutput();
        QVERIFY2(said.contains("compare_searchers.json with 8 finished runs"), qPrintable(said));
        QImage image(out);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 800 && image.height() >= 500);
        // A bad view name is a clear error.
        gui.start(MAPWRIGHT_GUI, {"--screenshot", out, "--view", "everything"});
        QVERIFY(gui.waitForFinished(60000));
        QCOMPARE(gui.exitCode(), 2);
        QVERIFY(gui.readAllStandardError().contains("unknown view"));
        // A broken session file is named in the error, exit status 1.
        gui.start(MAPWRIGHT_GUI,
                  {"--session", kSource + "/samples/networks/resnet50.json", "--screenshot", out});
        QVERIFY(gui.waitForFinished(60000));
        QCOMPARE(gui.exitCode(), 1);
        QVERIFY(gui.readAllStandardError().contains("resnet50.json"));
        // A requested search that fails fails the script, saying why (it
        // was only a line in the picture's status bar, and exit status 0).
        mw::Json failing = mw::readJsonFile(MainWindow::defaultSessionPath().toStdString());
        failing["runs"] = mw::Json::array({{{"searcher", "gamma"},
                                            {"layer", failing["workload"]["layers"][0]["name"]},
                                            {"settings",
                                             {{"budget_evaluations", 100},
                                              {"seed", 1},
                                              {"objective", "edp"},
                                              {"threads", 1},
                                              {"params", {{"population", -5}}}}}}});
        const QString failingPath = path("failing-run.json");
        mw::writeTextFile(failingPath.toStdString(), failing.dump());
        gui.start(MAPWRIGHT_GUI, {"--session", failingPath, "--screenshot", out});
        QVERIFY(gui.waitForFinished(60000));
        QCOMPARE(gui.exitCode(), 1);
        const QString why = gui.readAllStandardError();
        QVERIFY2(why.contains("param population: is -5; expected a whole number from 4 to 100000"),
                 qPrintable(why));
        // --help needs no display.
        QProcess help;
        QProcessEnvironment bare = QProcessEnvironment::systemEnvironment();
        bare.remove("DISPLAY");
        bare.remove("WAYLAND_DISPLAY");
        bare.remove("QT_QPA_PLATFORM");
        help.setProcessEnvironment(bare);
        help.start(MAPWRIGHT_GUI, {"--help"});
        QVERIFY(help.waitForFinished(60000));
        QCOMPARE(help.exitCode(), 0);
        QVERIFY(help.readAllStandardOutput().contains("--screenshot"));
    }
};

QTEST_MAIN(TestGui)
#include "test_gui.moc"
