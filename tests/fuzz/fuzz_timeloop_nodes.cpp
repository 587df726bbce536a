// The Python front end's files: v0.4 node lists (!Container, !Component,
// !Parallel, !Nothing; spatial meshes, per-node constraints, attributes
// inherited, expressions over variables), YAML's << and the front end's <<<
// merges, as in the exercises' designs and layer shapes. Same input shape as
// fuzz_timeloop ("#FILE" between files); seeded from tests/fuzz/seeds/timeloop_nodes.
#include "fuzz_timeloop_case.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::importTimeloopFiles(data, size);
    return 0;
}
