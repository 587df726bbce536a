// The MIP solver behind CoSA: the wire format between the program and its
// CBC helper process, solves there agreeing with solves here, and every way
// the helper can fail (missing, crashing, silent, hanging, cancelled)
// reported without harm to the program.
#include "search/mip_solver.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <thread>

using namespace mw;

namespace {

// max 5a + 4b + 3c subject to 2a + 3b + c <= 5, binaries: a = b = 1 gives 9.
MipProblem knapsack() {
    MipProblem p;
    const int a = p.col(0, 1, -5, true);
    const int b = p.col(0, 1, -4, true);
    const int c = p.col(0, 1, -3, true);
    p.row({{a, 2.0}, {b, 3.0}, {c, 1.0}}, -kMipInfinity, 5.0);
    return p;
}

// Points MAPWRIGHT_CBC at a stand-in helper for the life of this object.
class FakeHelper {
  public:
    FakeHelper(const QTemporaryDir& dir, const QByteArray& script) {
        const QString path = dir.filePath("fake-cbc");
        QFile f(path);
        if (f.open(QIODevice::WriteOnly)) {
            f.write("#!/bin/sh\n" + script + "\n");
            f.close();
        }
        f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        qputenv("MAPWRIGHT_CBC", path.toUtf8());
    }
    ~FakeHelper() { qunsetenv("MAPWRIGHT_CBC"); }
};

const auto never = [] { return false; };

} // namespace

class TestMip : public QObject {
    Q_OBJECT
  private slots:
    void wireRoundTrips();
    void corruptRequestsAreRejected();
    void helperSolvesAsInProcess();
    void helperFailuresAreReported();
    void cancelKillsTheHelperAtOnce();
};

void TestMip::wireRoundTrips() {
    const MipProblem p = knapsack();
    MipOptions o;
    o.seconds = 2.5;
    o.maxNodes = 77;
    o.localBranching = false;
    o.feasibilityPump = true;
    o.startCols = {0, 2};
    o.startValues = {1.0, 1.0};
    const std::vector<double> wire = encodeMipRequest(p, o);
    MipProblem back;
    MipOptions backOptions;
    QVERIFY(decodeMipRequest(wire, back, backOptions));
    QCOMPARE(encodeMipRequest(back, backOptions), wire);
    QCOMPARE(back.numIntegers(), 3);
    QCOMPARE(backOptions.maxNodes, 77);
    QVERIFY(backOptions.feasibilityPump && !backOptions.localBranching && backOptions.rootCuts);

    MipSolution s;
    s.feasible = s.optimal = true;
    s.objective = -9;
    s.x = {1, 1, 0};
    s.more = {{1, 0, 1}};
    s.nodes = 3;
    MipSolution sBack;
    QVERIFY(decodeMipSolution(encodeMipSolution(s), sBack));
    QCOMPARE(sBack.x, s.x);
    QCOMPARE(sBack.more, s.more);
    QCOMPARE(sBack.objective, -9.0);
}

void TestMip::corruptRequestsAreRejected() {
    const std::vector<double> wire = encodeMipRequest(knapsack(), MipOptions{});
    MipProblem p;
    MipOptions o;
    auto rejects = [&](std::vector<double> w) { return !decodeMipRequest(w, p, o); };
    QVERIFY(rejects({}));
    QVERIFY(rejects(std::vector<double>(wire.begin(), wire.end() - 1))); // truncated
    std::vector<double> longer = wire;
    longer.push_back(0);
    QVERIFY(rejects(longer));
    std::vector<double> badTag = wire;
    badTag[0] = 1;
    QVERIFY(rejects(badTag));
    std::vector<double> badColumns = wire;
    badColumns[2] = 2.5; // a fractional count
    QVERIFY(rejects(badColumns));
    std::vector<double> badIndex = wire;
    badIndex[9 + 4 * 3 + 3] = 3; // the row's first column, one past the last
    QVERIFY(rejects(badIndex));
    MipSolution s;
    QVERIFY(!decodeMipSolution({1, 1, 0, -9, -9, 0.1, 3, 0}, s));          // no header's worth
    QVERIFY(!decodeMipSolution({1, 1, 0, -9, -9, 0.1, 3, 0, 1, 1, 1}, s)); // x cut short
}

void TestMip::helperSolvesAsInProcess() {
    QVERIFY2(!mipSolverPath().empty(), "mapwright-cbc is built with the engine");
    const MipProblem p = knapsack();
    MipOptions o;
    o.seconds = 10;
    const MipSolution there = solveMip(p, o, never);
    QVERIFY2(there.failure.empty(), there.failure.c_str());
    QVERIFY(there.feasible && there.optimal);
    QCOMPARE(there.objective, -9.0);
    QCOMPARE(there.x, std::vector<double>({1, 1, 0}));
    const MipSolution here = solveMipInProcess(p, o);
    QCOMPARE(here.objective, there.objective);
    QCOMPARE(here.x, there.x);
    QCOMPARE(there.variables, 3);
    QCOMPARE(there.constraints, 1);
}

void TestMip::helperFailuresAreReported() {
    QTemporaryDir dir;
    MipOptions o;
    o.seconds = 0; // the program waits 5 s past a helper's time limit
    {
        qputenv("MAPWRIGHT_CBC", dir.filePath("absent").toUtf8());
        const MipSolution s = solveMip(knapsack(), o, never);
        qunsetenv("MAPWRIGHT_CBC");
        QVERIFY2(s.failure.find("mapwright-cbc was not found") != std::string::npos,
                 s.failure.c_str());
    }
    {
        FakeHelper crash(dir, "kill -SEGV $$");
        QCOMPARE(solveMip(knapsack(), o, never).failure, std::string("CBC crashed (signal 11)"));
    }
    {
        FakeHelper quits(dir, "exit 4");
        QCOMPARE(solveMip(knapsack(), o, never).failure, std::string("CBC exited with status 4"));
    }
    {
        FakeHelper silent(dir, "cat > /dev/null; printf 'half'");
        QCOMPARE(solveMip(knapsack(), o, never).failure,
                 std::string("the CBC process returned a malformed result"));
    }
    {
        FakeHelper hangs(dir, "exec sleep 60");
        const auto t0 = std::chrono::steady_clock::now();
        const MipSolution s = solveMip(knapsack(), o, never);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(s.failure.find("was stopped") != std::string::npos, s.failure.c_str());
        QVERIFY2(seconds >= 5.0 && seconds < 8.0, qPrintable(QString::number(seconds)));
    }
}

// The 100 ms: from the cancel request to the solve's return, the
// helper killed and reaped.
void TestMip::cancelKillsTheHelperAtOnce() {
    QTemporaryDir dir;
    FakeHelper hangs(dir, "exec sleep 60");
    std::atomic<bool> cancel{false};
    std::chrono::steady_clock::time_point cancelledAt;
    std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        cancelledAt = std::chrono::steady_clock::now();
        cancel = true;
    });
    MipOptions o;
    o.seconds = 30;
    const MipSolution s = solveMip(knapsack(), o, [&] { return cancel.load(); });
    const auto returned = std::chrono::steady_clock::now();
    canceller.join();
    QVERIFY(s.failure.empty() && !s.feasible);
    const double ms = std::chrono::duration<double, std::milli>(returned - cancelledAt).count();
    qInfo("helper stopped %.1f ms after the cancel", ms);
    QVERIFY2(ms < 100.0, qPrintable(QString::number(ms)));
}

QTEST_GUILESS_MAIN(TestMip)
#include "test_mip.moc"
