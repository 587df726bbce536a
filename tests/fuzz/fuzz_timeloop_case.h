#pragma once
// What the Timeloop harnesses do with a case once its files are split out:
// read it as the importer reads them (merged by top-level key), evaluate it,
// turn its constraints into a map space, and write all of it back as
// Timeloop YAML.
#include "fuzz_common.h"

#include "io/timeloop/timeloop.h"
#include "mapspace/mapspace.h"
#include "model/cost_model.h"

#include <string>
#include <vector>

namespace fuzz {

// Parts of one input, each after a line "#FILE" or "#FILE NAME" (a YAML
// comment, so each part is still a valid file); a part without a name is
// fileN.yaml.
inline std::vector<std::pair<std::string, std::string>> splitFiles(const std::string& all) {
    std::vector<std::pair<std::string, std::string>> parts;
    std::string name = "file0.yaml";
    std::size_t start = 0;
    for (int i = 1;; ++i) {
        const std::size_t next = all.find("\n#FILE", start);
        parts.emplace_back(
            name, all.substr(start, next == std::string::npos ? std::string::npos : next - start));
        if (next == std::string::npos)
            break;
        const std::size_t eol = all.find('\n', next + 1);
        std::string given =
            all.substr(next + 6, (eol == std::string::npos ? all.size() : eol) - (next + 6));
        while (!given.empty() && given.front() == ' ')
            given.erase(given.begin());
        name = given.empty() ? "file" + std::to_string(i) + ".yaml" : given;
        if (eol == std::string::npos)
            break;
        start = eol + 1;
    }
    return parts;
}

inline void importTimeloopCase(const std::vector<mw::TimeloopText>& files) {
    expectInputErrors([&] {
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
}

// One input as separate files (fuzz_timeloop, fuzz_timeloop_nodes).
inline void importTimeloopFiles(const std::uint8_t* data, std::size_t size) {
    std::vector<mw::TimeloopText> files;
    for (auto& [name, body] : splitFiles(text(data, size)))
        files.push_back({name, body, nullptr});
    importTimeloopCase(files);
}

} // namespace fuzz
