// Map-space constraints JSON against the Eyeriss-like sample and a small conv
// layer: read, a map space built under them, and a few legal mappings drawn
// and moved.
#include "fuzz_common.h"

#include "mapspace/mapspace.h"
#include "model/cost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const mw::Architecture arch =
        mw::loadArchitecture(fuzz::sample("architectures/eyeriss_like.json"));
    static const mw::Problem problem = fuzz::smallConv();
    fuzz::expectInputErrors([&] {
        const mw::MapSpace space(problem, arch,
                                 mw::constraintsFromJson(fuzz::json(data, size), problem, arch));
        mw::Rng rng(1);
        mw::Mapping m;
        mw::Evaluation e;
        if (space.sampleLegal(rng, m, e, 200))
            for (int i = 0; i < 20; ++i) {
                space.randomMove(m, rng);
                space.repair(m, rng, e);
            }
    });
    return 0;
}
