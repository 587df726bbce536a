#pragma once
// A design-space sweep on a worker thread (explore/sweep_run.h), writing each
// point to its results database there as it finishes. Finished points reach
// the GUI through a Mailbox (ui/mailbox.h) and a queued, argument-free signal.
#include "explore/sweep_run.h"

#include "ui/mailbox.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

namespace mw::ui {

class SweepJob : public QObject {
    Q_OBJECT
  public:
    // Runs `spec` into the database at dbPath (resumed when it holds this
    // sweep's points) on `threads` threads.
    SweepJob(mw::SweepSpec spec, std::string dbPath, int threads, QObject* parent = nullptr);
    ~SweepJob() override; // cancels and joins

    void start();
    void cancel(); // points in flight are dropped; finished ones stay in the database
    bool running() const { return running_; }
    void wait();

    struct Mail {
        std::vector<mw::PointRecord> points; // finished since the last take()
        std::vector<mw::PointRecord> before; // a resumed database's points (first mail)
        bool finished = false;               // the sweep ended (complete, cancelled or failed)
        bool complete = false;
        std::optional<QString> failure;
    };
    Mail take();

  signals:
    void mailArrived();

  private:
    void run();
    template <typename F> void post(F&& add);

    mw::SweepSpec spec_;
    std::string dbPath_;
    int threads_;
    std::atomic<bool> cancel_{false};
    std::atomic<bool> running_{false};
    Mailbox<Mail> mailbox_;
    std::thread thread_;
};

} // namespace mw::ui
