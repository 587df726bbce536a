#include "ui/sweep_job.h"

#include "explore/sweep_db.h"

#include <pthread.h>

namespace mw::ui {

SweepJob::SweepJob(mw::SweepSpec spec, std::string dbPath, int threads, QObject* parent)
    : QObject(parent), spec_(std::move(spec)), dbPath_(std::move(dbPath)), threads_(threads) {}

SweepJob::~SweepJob() {
    cancel();
    wait();
}

void SweepJob::start() {
    if (thread_.joinable())
        return;
    running_ = true;
    thread_ = std::thread([this] {
        run();
        running_ = false;
    });
    pthread_setname_np(thread_.native_handle(), "sweep");
}

void SweepJob::cancel() {
    cancel_ = true;
}

void SweepJob::wait() {
    if (thread_.joinable())
        thread_.join();
}

SweepJob::Mail SweepJob::take() {
    return mailbox_.take();
}

template <typename F> void SweepJob::post(F&& add) {
    if (mailbox_.post(std::forward<F>(add)))
        emit mailArrived();
}

void SweepJob::run() {
    try {
        mw::SweepDatabase db = mw::SweepDatabase::create(dbPath_, mw::toJson(spec_), "", true);
        const std::map<int, mw::PointRecord> before = db.points();
        post([&](Mail& m) {
            for (const auto& [index, r] : before)
                m.before.push_back(r);
        });
        mw::SweepRunOptions options;
        options.threads = threads_;
        const bool complete = mw::runSweep(
            spec_, before, options,
            [&](const mw::PointRecord& r) {
                db.write(r);
                post([&](Mail& m) { m.points.push_back(r); });
            },
            &cancel_);
        post([&](Mail& m) {
            m.finished = true;
            m.complete = complete;
        });
    } catch (const std::exception& e) {
        const QString why = QString::fromStdString(e.what());
        post([&](Mail& m) {
            m.finished = true;
            m.failure = why;
        });
    }
}

} // namespace mw::ui
