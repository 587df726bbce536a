// Timeloop YAML: one input holds several files, each after a line "#FILE":
// an input.yaml, an ERT.yaml, a mapping, constraints... (fuzz_timeloop_case.h).
// Seeded from the tutorial's dumps and the same cases as users write them.
#include "fuzz_timeloop_case.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::importTimeloopFiles(data, size);
    return 0;
}
