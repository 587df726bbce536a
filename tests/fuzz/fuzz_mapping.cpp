// Mapping JSON against the Eyeriss-like sample and a small conv layer: read,
// evaluated by the cost model (legal or not), written as JSON and as
// Timeloop's mapping YAML.
#include "fuzz_common.h"

#include "io/timeloop/timeloop.h"
#include "model/cost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const mw::Architecture arch =
        mw::loadArchitecture(fuzz::sample("architectures/eyeriss_like.json"));
    static const mw::Problem problem = fuzz::smallConv();
    fuzz::expectInputErrors([&] {
        const mw::Mapping m = mw::mappingFromJson(fuzz::json(data, size), problem, arch);
        mw::evaluate(problem, arch, m);
        const mw::Json written = mw::toJson(m, problem, arch);
        if (mw::toJson(mw::mappingFromJson(written, problem, arch), problem, arch) != written)
            __builtin_trap();
        mw::timeloopMappingYaml(problem, arch, m);
    });
    return 0;
}
