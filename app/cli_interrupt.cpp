#include "cli_interrupt.h"

#include <csignal>
#include <cstring>
#include <unistd.h>

namespace cli {

namespace {

std::atomic<bool> gInterrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the flag is set in a signal handler");

extern "C" void onInterrupt(int) {
    // Only async-signal-safe calls here: an atomic store, write and _exit.
    if (gInterrupted.exchange(true)) {
        static const char again[] = "\ninterrupted again: exiting at once\n";
        (void)!write(STDERR_FILENO, again, sizeof again - 1);
        _exit(kExitInterrupted);
    }
    static const char first[] =
        "\ninterrupted: stopping and writing what is finished (again to quit at once)\n";
    (void)!write(STDERR_FILENO, first, sizeof first - 1);
}

} // namespace

void installInterruptHandler() {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = onInterrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; // reads and writes in progress carry on
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

const std::atomic<bool>* interruptFlag() {
    return &gInterrupted;
}

bool interrupted() {
    return gInterrupted.load();
}

} // namespace cli
