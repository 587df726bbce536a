#pragma once
// One search (or one whole-network search) on a worker thread. The engine
// runs there, so the GUI never waits on the cost model. What it reports
// (progress, the result, a failure) goes into a Mailbox (ui/mailbox.h), and a
// queued signal, mailArrived, tells the GUI thread to take() it.
#include "arch/architecture.h"
#include "mapspace/mapspace.h"
#include "search/network_search.h"
#include "search/search.h"
#include "workload/problem.h"

#include "ui/mailbox.h"

#include <QObject>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace mw::ui {

class SearchJob : public QObject {
    Q_OBJECT
  public:
    // A single-layer search of `problem` with `searcher`, in the map space
    // `constraints` narrow.
    SearchJob(int id, mw::Architecture arch, mw::Problem problem, std::string searcher,
              mw::SearchSettings settings, mw::MapSpaceConstraints constraints = {},
              QObject* parent = nullptr);
    // A searcher from outside the engine's list: made by `make` on the worker thread.
    void setSearcherFactory(std::function<std::unique_ptr<mw::Searcher>()> make) {
        make_ = std::move(make);
    }
    // A whole-network search.
    SearchJob(int id, mw::Architecture arch, mw::Network network, mw::NetworkSearchOptions options,
              QObject* parent = nullptr);
    ~SearchJob() override; // cancels and joins

    int id() const { return id_; }
    void start();
    // Cancel keeps the best mapping found so far (the driver returns it).
    void cancel();
    // Pausing blocks the search at its next progress report. A time budget
    // keeps running while paused: it is wall-clock time.
    void setPaused(bool paused);
    bool paused() const { return paused_; }
    bool running() const;
    void wait(); // until the thread ends (tests, scripted screenshots)

    // What the worker reported since the last take(), in order: progress
    // first, then at most one of the result, the network outcome, a failure.
    struct Mail {
        struct Progress {
            qint64 evaluations = 0;
            double seconds = 0.0;
            double best = 0.0;
            // A step that is not search (mw::SearchProgress::phase); empty while searching.
            QString phase;
            double phaseFraction = -1.0;
            double phaseSecondsLeft = -1.0;
        };
        struct LayerProgress {
            int layer = 0;
            qint64 evaluations = 0;
            double best = 0.0;
        };
        std::vector<Progress> progress;
        std::vector<LayerProgress> layerProgress;
        std::optional<mw::SearchResult> result;
        std::optional<mw::NetworkOutcome> outcome;
        std::optional<QString> failure;
    };
    Mail take();

  signals:
    // Queued to the GUI thread; emitted when the mailbox stops being empty.
    // No arguments: a queued signal's arguments are handed over inside Qt.
    void mailArrived();

  private:
    void run();
    void throttle(); // blocks while paused
    // Adds to the mailbox under its lock; signals if it was empty.
    template <typename F> void post(F&& add);

    int id_;
    mw::Architecture arch_;
    mw::Problem problem_;
    mw::Network network_;
    std::string searcher_;
    std::function<std::unique_ptr<mw::Searcher>()> make_;
    mw::SearchSettings settings_;
    mw::MapSpaceConstraints constraints_;
    mw::NetworkSearchOptions networkOptions_;
    bool isNetwork_ = false;
    std::atomic<bool> cancel_{false};
    std::atomic<bool> paused_{false};
    std::mutex mutex_;
    std::condition_variable resume_;
    Mailbox<Mail> mailbox_;
    // A std::thread, not a QThread: ThreadSanitizer sees its join.
    std::thread thread_;
    std::atomic<bool> running_{false};
};

} // namespace mw::ui
