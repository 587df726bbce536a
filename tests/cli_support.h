#pragma once
// What the CLI's tests share (test_cli, test_cli_sweep): the program run as
// a script runs it, the sample files, and the checks of a one-line error.
#include "common/error.h"
#include "io/json_io.h"
#include "test_support.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <string>

namespace mw::cli_test {

inline const QString kCli = QStringLiteral(MAPWRIGHT_CLI);
inline const std::string kSamples = std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/";
inline const std::string kCases = std::string(MAPWRIGHT_TEST_DATA) + "/timeloop-tutorial/";

struct Run {
    int exitCode;
    QString out;
    QString err;
};

inline Run run(const QStringList& args) {
    QProcess p;
    p.start(kCli, args);
    if (!p.waitForFinished(120000))
        return {-1, "", "timeout"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

inline QString q(const std::string& s) {
    return QString::fromStdString(s);
}

inline QStringList eyerissArgs() {
    return {"--arch",     q(kSamples + "architectures/eyeriss_like.json"),
            "--workload", q(kSamples + "workloads/eyeriss_tutorial_conv.json"),
            "--mapping",  q(kSamples + "mappings/eyeriss_tutorial_conv_timeloop.json")};
}

inline void expectOneLineError(const Run& r, const QString& part) {
    QVERIFY2(r.exitCode != 0, qPrintable("exit code " + QString::number(r.exitCode)));
    const QString err = r.err.trimmed();
    QVERIFY2(!err.isEmpty() && !err.contains('\n'), qPrintable("stderr: " + r.err));
    QVERIFY2(err.startsWith("error: "), qPrintable(err));
    QVERIFY2(err.contains(part), qPrintable(err + " lacks " + part));
}

// test_support.h's small network, as a file.
inline std::string writeSmallNetwork(const QTemporaryDir& tmp) {
    const mw::Network n = mw::test::twoConvs();
    const std::string path = tmp.filePath("net.json").toStdString();
    mw::writeTextFile(path, mw::toJson(n).dump(1));
    return path;
}

} // namespace mw::cli_test
