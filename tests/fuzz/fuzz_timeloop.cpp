// Timeloop YAML: one input holds several files, each after a line "#FILE":
// an input.yaml, an ERT.yaml, a mapping, constraints... (fuzz_timeloop_case.h).
// Seeded from the tutorial's dumps and the same cases as users write them.
#include "fuzz_timeloop_case.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<mw::TimeloopText> files;
    for (auto& [name, body] : fuzz::splitFiles(fuzz::text(data, size)))
        files.push_back({name, body, nullptr});
    fuzz::importTimeloopCase(files);
    return 0;
}
