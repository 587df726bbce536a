#include "ui/search_job.h"

#include "common/error.h"

#include <pthread.h>

namespace mw::ui {

SearchJob::SearchJob(int id, mw::Architecture arch, mw::Problem problem, std::string searcher,
                     mw::SearchSettings settings, mw::MapSpaceConstraints constraints,
                     QObject* parent)
    : QObject(parent), id_(id), arch_(std::move(arch)), problem_(std::move(problem)),
      searcher_(std::move(searcher)), settings_(std::move(settings)),
      constraints_(std::move(constraints)) {}

SearchJob::SearchJob(int id, mw::Architecture arch, mw::Network network,
                     mw::NetworkSearchOptions options, QObject* parent)
    : QObject(parent), id_(id), arch_(std::move(arch)), network_(std::move(network)),
      networkOptions_(std::move(options)), isNetwork_(true) {}

SearchJob::~SearchJob() {
    cancel();
    wait();
}

void SearchJob::start() {
    if (thread_.joinable())
        return;
    running_ = true;
    thread_ = std::thread([this] {
        run();
        running_ = false;
    });
    const std::string name = "search " + std::to_string(id_);
    pthread_setname_np(thread_.native_handle(), name.substr(0, 15).c_str());
}

void SearchJob::cancel() {
    cancel_ = true;
    setPaused(false);
}

void SearchJob::setPaused(bool paused) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        paused_ = paused;
    }
    resume_.notify_all();
}

bool SearchJob::running() const {
    return running_;
}

void SearchJob::wait() {
    if (thread_.joinable())
        thread_.join();
}

void SearchJob::throttle() {
    std::unique_lock<std::mutex> lock(mutex_);
    resume_.wait(lock, [this] { return !paused_ || cancel_; });
}

SearchJob::Mail SearchJob::take() {
    return mailbox_.take();
}

template <typename F> void SearchJob::post(F&& add) {
    if (mailbox_.post(std::forward<F>(add)))
        emit mailArrived();
}

void SearchJob::run() {
    try {
        if (isNetwork_) {
            mw::NetworkOutcome outcome = mw::searchNetwork(
                network_, arch_, networkOptions_,
                [this](int layer, const mw::SearchProgress& p) {
                    throttle();
                    post([&](Mail& m) {
                        m.layerProgress.push_back({layer, p.evaluations, p.best});
                    });
                },
                &cancel_);
            post([&](Mail& m) { m.outcome = std::move(outcome); });
            return;
        }
        const mw::MapSpace space(problem_, arch_, constraints_);
        const std::unique_ptr<mw::Searcher> searcher =
            make_ ? make_() : mw::makeSearcher(searcher_);
        mw::SearchResult r = mw::runSearch(
            space, *searcher, searcher_, settings_,
            [this](const mw::SearchProgress& p) {
                throttle();
                post([&](Mail& m) {
                    m.progress.push_back({p.evaluations, p.seconds, p.best,
                                          QString::fromStdString(p.phase), p.phaseFraction,
                                          p.phaseSecondsLeft});
                });
            },
            &cancel_);
        post([&](Mail& m) { m.result = std::move(r); });
    } catch (const mw::InputError& e) {
        post([&](Mail& m) { m.failure = QString::fromStdString(e.what()); });
    } catch (const std::exception& e) {
        post([&](Mail& m) { m.failure = QString("search failed: %1").arg(e.what()); });
    }
}

} // namespace mw::ui
