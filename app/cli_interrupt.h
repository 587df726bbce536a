#pragma once
// Ctrl-C and SIGTERM in the long commands (search, compare, network,
// train-surrogate, bench). The first signal raises the flag every long
// command hands the engine as its cancel flag: the work stops within a batch,
// what is finished is written (results say "stopped": "interrupted"), where
// it went is printed, and the command exits with kExitInterrupted. A second
// signal exits at once.
//
// Signals are delivered to the process, so the flag is the process's one
// piece of global state; everything below the CLI takes it as a parameter.
#include <atomic>

namespace cli {

inline constexpr int kExitInterrupted = 130; // 128 + SIGINT, as shells report it

// Installs the handlers (once, at start-up).
void installInterruptHandler();
// The cancel flag to give the engine.
const std::atomic<bool>* interruptFlag();
bool interrupted();

} // namespace cli
