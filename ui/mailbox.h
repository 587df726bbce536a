#pragma once
// What a worker thread reports to the GUI thread: gathered under a std::mutex
// and taken whole, so the data passes through a lock ThreadSanitizer sees
// (Debian's Qt is not instrumented: data handed over inside a queued signal's
// arguments looks to it like a race), and a burst of reports costs the GUI one
// event. The worker signals (queued, without arguments) when post() says the
// mailbox was empty.
#include <mutex>
#include <utility>

namespace mw::ui {

template <typename Mail> class Mailbox {
  public:
    // add(Mail&) under the lock; true when the mailbox was empty before.
    template <typename F> bool post(F&& add) {
        std::lock_guard<std::mutex> lock(mutex_);
        add(mail_);
        const bool wasEmpty = !pending_;
        pending_ = true;
        return wasEmpty;
    }
    Mail take() {
        std::lock_guard<std::mutex> lock(mutex_);
        Mail out = std::move(mail_);
        mail_ = Mail{};
        pending_ = false;
        return out;
    }

  private:
    std::mutex mutex_;
    Mail mail_;
    bool pending_ = false;
};

} // namespace mw::ui
