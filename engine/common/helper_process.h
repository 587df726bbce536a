#pragma once
// Work that runs in a helper program of ours, so that a library that crashes,
// hangs or cannot be stopped costs only that piece of work: the CBC solves of
// CoSA (mapwright-cbc) and ONNX's shape inference (mapwright-onnx). The helper
// is spawned (posix_spawn, a fresh program: a forked copy of a threaded
// program may deadlock on a lock another thread held), reads its request on
// stdin to the end, writes its reply on stdout and exits 0.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace mw {

// The helper `name`: $ENV (when set), else beside this program, else at
// `buildPath` (the build tree's); empty when none is executable.
std::string findHelper(const char* env, const char* name, const char* buildPath);

struct HelperRun {
    enum class Outcome { Replied, Cancelled, Overran, Failed };
    Outcome outcome = Outcome::Failed;
    std::vector<char> reply; // when Replied
    std::string failure;     // when Failed: why, in a few words ("crashed (signal 11)")
};

// Runs helper with `request` on its stdin. cancelled() is polled every 20 ms
// and kills the helper; so does `patienceSeconds` passing (the time cancelled()
// itself takes, a paused caller, is not counted).
HelperRun runHelper(const std::string& helper, const char* request, std::size_t size,
                    double patienceSeconds, const std::function<bool()>& cancelled = {});

// The helper's side: all of `in` until its end, and a whole reply to `out`;
// false on an I/O error. It dies with the program that started it.
bool readRequest(int in, std::vector<char>& bytes);
bool writeReply(int out, const char* data, std::size_t size);

} // namespace mw
