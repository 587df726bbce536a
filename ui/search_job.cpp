#include "ui/search_job.h"

#include "common/error.h"

namespace mw::ui {

namespace {
void registerTypes() {
    static const bool once = [] {
        qRegisterMetaType<mw::SearchResult>();
        qRegisterMetaType<mw::NetworkOutcome>();
        return true;
    }();
    (void)once;
}
} // namespace

SearchJob::SearchJob(int id, mw::Architecture arch, mw::Problem problem, std::string searcher,
                     mw::SearchSettings settings, QObject* parent)
    : QObject(parent), id_(id), arch_(std::move(arch)), problem_(std::move(problem)),
      searcher_(std::move(searcher)), settings_(std::move(settings)) {
    registerTypes();
}

SearchJob::SearchJob(int id, mw::Architecture arch, mw::Network network,
                     mw::NetworkSearchOptions options, QObject* parent)
    : QObject(parent), id_(id), arch_(std::move(arch)), network_(std::move(network)),
      networkOptions_(std::move(options)), isNetwork_(true) {
    registerTypes();
}

SearchJob::~SearchJob() {
    cancel();
    wait();
}

void SearchJob::start() {
    if (thread_)
        return;
    thread_ = QThread::create([this] { run(); });
    thread_->setObjectName(QString("search %1").arg(id_));
    thread_->start();
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
    return thread_ && thread_->isRunning();
}

void SearchJob::wait() {
    if (thread_) {
        thread_->wait();
        delete thread_;
        thread_ = nullptr;
    }
}

void SearchJob::throttle() {
    std::unique_lock<std::mutex> lock(mutex_);
    resume_.wait(lock, [this] { return !paused_ || cancel_; });
}

void SearchJob::run() {
    // Signals emitted here are queued to the receivers on the GUI thread.
    try {
        if (isNetwork_) {
            const auto outcome = mw::searchNetwork(
                network_, arch_, networkOptions_,
                [this](int layer, const mw::SearchProgress& p) {
                    throttle();
                    emit layerProgress(id_, layer, p.evaluations, p.best);
                },
                &cancel_);
            emit networkFinished(id_, outcome);
            return;
        }
        const mw::MapSpace space(problem_, arch_);
        const mw::SearchResult r = mw::runSearch(
            space, searcher_, settings_,
            [this](const mw::SearchProgress& p) {
                throttle();
                emit progress(id_, p.evaluations, p.seconds, p.best);
            },
            &cancel_);
        emit finished(id_, r);
    } catch (const mw::InputError& e) {
        emit failed(id_, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        emit failed(id_, QString("search failed: %1").arg(e.what()));
    }
}

} // namespace mw::ui
