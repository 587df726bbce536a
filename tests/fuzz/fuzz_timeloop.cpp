// Timeloop YAML: one input holds Timeloop's processed input.yaml, then its
// ERT.yaml after a line "#ERT", then optionally a mapping after a line "#MAP"
// (YAML comments, so each part is still a valid file). Read as the importer
// reads them, and the imported case evaluated and written back as Timeloop YAML.
#include "fuzz_common.h"

#include "io/timeloop.h"
#include "model/cost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string all = fuzz::text(data, size);
    const std::size_t ert = all.find("\n#ERT\n");
    if (ert == std::string::npos)
        return 0;
    const std::size_t map = all.find("\n#MAP\n", ert);
    const mw::TimeloopText input{"input.yaml", all.substr(0, ert)};
    const mw::TimeloopText table{
        "ERT.yaml", all.substr(ert, map == std::string::npos ? std::string::npos : map - ert)};
    const mw::TimeloopText mapping = map == std::string::npos
                                         ? mw::TimeloopText{}
                                         : mw::TimeloopText{"map.yaml", all.substr(map)};
    fuzz::expectInputErrors([&] {
        const mw::TimeloopCase c = mw::importTimeloopTexts(input, table, mapping);
        mw::evaluate(c.problem, c.arch, c.mapping);
        mw::timeloopArchitectureYaml(c.arch);
        mw::timeloopProblemYaml(c.problem);
        mw::timeloopMappingYaml(c.problem, c.arch, c.mapping);
    });
    return 0;
}
