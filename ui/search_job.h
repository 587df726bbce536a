#pragma once
// One search (or one whole-network search) on a worker thread. The engine
// runs there; progress and the result come back to the GUI thread as queued
// signals, so the GUI never waits on the cost model.
#include "arch/architecture.h"
#include "mapspace/mapspace.h"
#include "search/network_search.h"
#include "search/search.h"
#include "workload/problem.h"

#include <QObject>
#include <QThread>

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace mw::ui {

class SearchJob : public QObject {
    Q_OBJECT
  public:
    // A single-layer search of `problem` with `searcher`.
    SearchJob(int id, mw::Architecture arch, mw::Problem problem, std::string searcher,
              mw::SearchSettings settings, QObject* parent = nullptr);
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

  signals:
    void progress(int id, qint64 evaluations, double seconds, double best);
    void layerProgress(int id, int layer, qint64 evaluations, double best);
    void finished(int id, const mw::SearchResult& result);
    void networkFinished(int id, const mw::NetworkOutcome& outcome);
    void failed(int id, const QString& message);

  private:
    void run();
    void throttle(); // blocks while paused

    int id_;
    mw::Architecture arch_;
    mw::Problem problem_;
    mw::Network network_;
    std::string searcher_;
    mw::SearchSettings settings_;
    mw::NetworkSearchOptions networkOptions_;
    bool isNetwork_ = false;
    std::atomic<bool> cancel_{false};
    std::atomic<bool> paused_{false};
    std::mutex mutex_;
    std::condition_variable resume_;
    QThread* thread_ = nullptr;
};

} // namespace mw::ui

Q_DECLARE_METATYPE(mw::SearchResult)
Q_DECLARE_METATYPE(mw::NetworkOutcome)
