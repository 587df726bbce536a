// MainWindow: autosave and crash recovery. Each window claims a slot in the
// autosave folder, a lock file it holds while it runs, so that windows open
// side by side never write over each other's autosave. A slot's "running"
// marker is written when the window starts and removed when it closes
// cleanly: a marker whose lock nobody holds (its process is gone) was left by
// a crash, and that slot's autosave is offered back at the next start.
#include "ui/main_window.h"

#include "io/session_io.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QMessageBox>
#include <QStandardPaths>
#include <QStatusBar>

#include <algorithm>

namespace mw::ui {

namespace {

constexpr int kAutosaveSlots = 32;

} // namespace

QString MainWindow::autosaveDir() const {
    return options_.autosaveDir.isEmpty()
               ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)
               : options_.autosaveDir;
}

QString MainWindow::autosaveSlotPath(int slot, const QString& suffix) const {
    // Slot 0 keeps the name a single window always had.
    return autosaveDir() + (slot == 0 ? QString("/autosave") : QString("/autosave-%1").arg(slot)) +
           suffix;
}

bool MainWindow::isAutosave(const QString& path) const {
    const QFileInfo file(path);
    return file.fileName().startsWith("autosave") &&
           file.absolutePath() == QFileInfo(autosaveDir()).absoluteFilePath();
}

QString MainWindow::autosavePath() const {
    return autosaveSlotPath(std::max(autosaveSlot_, 0), ".session.json");
}

void MainWindow::claimAutosaveSlot() {
    QDir().mkpath(autosaveDir());
    // A slot whose marker was left by a crash is passed over while a free
    // one remains: its autosave waits to be offered, and this window would
    // write over it.
    for (const bool crashedToo : {false, true})
        for (int slot = 0; slot < kAutosaveSlots; ++slot) {
            if (!crashedToo && QFileInfo::exists(autosaveSlotPath(slot, ".running")))
                continue;
            auto lock = std::make_unique<QLockFile>(autosaveSlotPath(slot, ".lock"));
            lock->setStaleLockTime(0); // held for the window's life; stale once its owner is gone
            if (lock->tryLock(0)) {
                autosaveLock_ = std::move(lock);
                autosaveSlot_ = slot;
                return;
            }
        }
    autosaveSlot_ = -1; // every slot held: slot 0's file, shared, and no marker
}

QStringList MainWindow::crashedAutosaves() const {
    // A marker left with no live owner: this window's own slot (it holds the
    // lock now, so the marker is its predecessor's) or one nobody holds.
    QStringList crashed;
    for (int slot = 0; slot < kAutosaveSlots; ++slot) {
        if (!QFileInfo::exists(autosaveSlotPath(slot, ".running")) ||
            !QFileInfo::exists(autosaveSlotPath(slot, ".session.json")))
            continue;
        bool ownerGone = slot == autosaveSlot_;
        if (!ownerGone) {
            QLockFile probe(autosaveSlotPath(slot, ".lock"));
            probe.setStaleLockTime(0);
            ownerGone = probe.tryLock(0); // (released when probe goes)
        }
        if (ownerGone)
            crashed << autosaveSlotPath(slot, ".session.json");
    }
    // The most recent first: the one to offer.
    std::sort(crashed.begin(), crashed.end(), [](const QString& a, const QString& b) {
        return QFileInfo(a).lastModified() > QFileInfo(b).lastModified();
    });
    return crashed;
}

void MainWindow::markRunning() {
    if (autosaveSlot_ < 0) // (another window's slot: its marker is its own)
        return;
    // The slot's file becomes this window's first, so that a crash before
    // any edit offers this session, not one an earlier window left there.
    autosaveNow();
    QFile marker(autosaveSlotPath(autosaveSlot_, ".running"));
    if (marker.open(QIODevice::WriteOnly | QIODevice::Truncate))
        marker.write(QByteArray::number(QCoreApplication::applicationPid()) + "\n");
}

void MainWindow::cleanExit() {
    if (autosaveSlot_ >= 0)
        QFile::remove(autosaveSlotPath(autosaveSlot_, ".running"));
}

mw::Session MainWindow::sessionToSave() const {
    mw::Session s = session_;
    for (const mw::SessionRun& r : requested_) // asked for, not run yet
        s.runs.push_back(r);
    return s;
}

bool MainWindow::autosaveNow() {
    try {
        QDir().mkpath(autosaveDir());
        mw::saveSession(autosavePath().toStdString(), sessionToSave());
        return true;
    } catch (const std::exception& e) {
        statusBar()->showMessage(QString("Autosave failed: %1").arg(e.what()), 5000);
        return false;
    }
}

void MainWindow::offerRestore() {
    const QStringList crashed = crashedAutosaves();
    // The newest whose slot this window can hold (its own, or a free one):
    // held until the user has answered, so that a window starting meanwhile
    // neither takes the slot nor writes over the file offered.
    QString offered;
    std::unique_ptr<QLockFile> held;
    for (const QString& file : crashed) {
        if (file == autosavePath() && autosaveSlot_ >= 0) {
            offered = file;
            break;
        }
        auto lock = std::make_unique<QLockFile>(QString(file).replace(".session.json", ".lock"));
        lock->setStaleLockTime(0);
        if (lock->tryLock(0)) {
            offered = file;
            held = std::move(lock);
            break;
        }
    }
    if (offered.isEmpty()) {
        markRunning();
        return;
    }
    const auto answer = QMessageBox::question(
        this, "Restore session?",
        QString("A Mapwright window did not close cleanly. Restore its autosaved session "
                "(%1)?%2")
            .arg(offered)
            .arg(crashed.size() > 1
                     ? QString(" (%1 more are offered at the next starts.)").arg(crashed.size() - 1)
                     : QString()),
        QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes);
    settleCrashedAutosave(offered, answer == QMessageBox::Yes);
    // Only now: the offered file may be this window's own slot's, which
    // marking writes (with the session restored, or the one declined for).
    markRunning();
}

QString MainWindow::settleCrashedAutosave(const QString& offered, bool restore) {
    QFile::remove(QString(offered).replace(".session.json", ".running")); // offered once
    if (restore && openSession(offered)) {
        path_.clear(); // save asks for a name: the autosave is not the user's file
        return {};
    }
    // Kept: a "No" may be a slip, and the slot's next autosave would write
    // over it. (Named "autosave...", so that saving it asks for a name too.)
    const QString stamp = QDateTime::currentDateTime().toString("yyyyMMdd-hhmmss");
    QString kept = autosaveDir() + "/autosave-declined-" + stamp + ".session.json";
    for (int n = 2; QFileInfo::exists(kept); ++n)
        kept = autosaveDir() + QString("/autosave-declined-%1-%2.session.json").arg(stamp).arg(n);
    if (!QFile::rename(offered, kept)) {
        statusBar()->showMessage(
            QString("The crashed session %1 could not be moved aside: copy it elsewhere before "
                    "this window's autosave writes over it.")
                .arg(offered));
        return offered;
    }
    statusBar()->showMessage(
        QString("The crashed session is kept as %1 (File > Open restores it).").arg(kept), 15000);
    return kept;
}

} // namespace mw::ui
