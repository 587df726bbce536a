// Timeloop YAML: one input holds several files, each after a line "#FILE"
// (a YAML comment, so each part is still a valid file): an input.yaml, an
// ERT.yaml, a mapping, constraints... Read as the importer reads them (merged
// by top-level key), and the imported case evaluated, its constraints turned
// into a map space, and all of it written back as Timeloop YAML.
#include "fuzz_common.h"

#include "io/timeloop.h"
#include "mapspace/mapspace.h"
#include "model/cost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string all = fuzz::text(data, size);
    std::vector<mw::TimeloopText> files;
    std::size_t start = 0;
    for (int i = 0; start <= all.size(); ++i) {
        const std::size_t next = all.find("\n#FILE\n", start);
        files.push_back(
            {"file" + std::to_string(i) + ".yaml",
             all.substr(start, next == std::string::npos ? std::string::npos : next - start)});
        if (next == std::string::npos)
            break;
        start = next + 1;
    }
    fuzz::expectInputErrors([&] {
        const mw::TimeloopCase c = mw::importTimeloopTexts(files);
        mw::evaluate(c.problem, c.arch, c.mapping);
        mw::timeloopArchitectureYaml(c.arch);
        mw::timeloopProblemYaml(c.problem);
        mw::timeloopErtYaml(c.arch);
        mw::timeloopArtYaml(c.arch);
        mw::timeloopMappingYaml(c.problem, c.arch, c.mapping);
        if (c.hasConstraints) {
            const mw::MapSpace space(c.problem, c.arch,
                                     mw::constraintsFromJson(c.constraints, c.problem, c.arch));
            mw::timeloopConstraintsYaml(c.constraints, c.problem, c.arch);
        }
        if (c.hasMapper)
            mw::timeloopMapperYaml(c.mapper);
    });
    return 0;
}
