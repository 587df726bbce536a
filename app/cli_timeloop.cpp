// The CLI's Timeloop and estimator commands: import-timeloop, export-timeloop
// and estimate.
#include "cli_common.h"
#include "estimate/estimator.h"
#include "io/estimate_reference.h"
#include "io/session_io.h"
#include "io/timeloop/template.h"
#include "io/timeloop/timeloop.h"
#include "mapspace/mapspace.h"

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

namespace cli {

namespace fs = std::filesystem;

namespace {

// Energies and areas span 1e-5 to 1e6: four significant digits.
std::string sig(double v) {
    std::ostringstream s;
    s << std::setprecision(4) << v;
    return s.str();
}

} // namespace

int cmdImportTimeloop(const Args& args) {
    if (args.positional.empty())
        throw InputError("import-timeloop", "expected Timeloop YAML files (arch.yaml problem.yaml "
                                            "[mapping.yaml] [constraints.yaml] [mapper.yaml] "
                                            "[ERT.yaml] [ART.yaml], or input.yaml ERT.yaml "
                                            "[map.yaml]) and --out DIR");
    std::vector<std::pair<std::string, std::string>> data;
    for (const auto& s : args.all("set"))
        data.push_back(mw::parseTemplateSetting(s, "--set"));
    const mw::TimeloopCase c = mw::importTimeloop(args.positional, data);
    const std::string out = outputFolder(args);
    const mw::Session session = mw::sessionFromTimeloop(c);
    const fs::path dir(out);
    std::vector<std::string> wrote;
    auto write = [&](const char* name, const std::string& text) {
        mw::writeTextFile((dir / name).string(), text);
        wrote.push_back((dir / name).string());
    };
    write("arch.json", mw::toJson(c.arch).dump(1) + "\n");
    write("workload.json", mw::toJson(session.network).dump(1) + "\n");
    if (c.hasMapping)
        write("mapping.json", mw::toJson(c.mapping, c.problem, c.arch).dump(1) + "\n");
    if (c.hasConstraints)
        write("constraints.json", c.constraints.dump(1) + "\n");
    // The session opens all of it in the GUI: the mapping as a run, the
    // mapper's search requested.
    write("session.json", mw::toJson(session).dump(1) + "\n");
    std::cout << "wrote";
    for (std::size_t i = 0; i < wrote.size(); ++i)
        std::cout << (i ? ", " : " ") << wrote[i];
    std::cout << "\n";
    for (const auto& n : c.notes)
        std::cout << "note: " << n << "\n";
    if (!c.hasMapping && !c.hasMapper)
        std::cout << "note: the input holds no mapping and no mapper; give mapping.yaml or "
                     "the mapper's map.yaml to evaluate one\n";
    if (c.hasMapper) {
        const mw::SearchSettings s = mw::searchSettingsFromMapper(c.mapper);
        std::cout << "the mapper's search: mapwright-cli search --arch "
                  << (dir / "arch.json").string() << " --workload "
                  << (dir / "workload.json").string()
                  << (c.hasConstraints ? " --constraints " + (dir / "constraints.json").string()
                                       : std::string())
                  << " --searcher " << c.mapper.searcher << " --objective " << c.mapper.objective;
        for (const auto& [k, v] : s.params)
            std::cout << " --param " << k << "=" << v;
        std::cout << " --seconds 60 --out OUT\n";
    }
    return 0;
}

int cmdExportTimeloop(const Args& args) {
    const mw::Architecture arch = mw::loadArchitecture(args.get("arch"));
    const mw::Problem problem = loadProblem(args);
    const std::string out = args.get("out");
    std::optional<mw::Mapping> mapping;
    if (args.has("mapping")) {
        std::vector<std::string> notes;
        mapping = mw::loadMapping(args.get("mapping"), problem, arch, &notes);
        for (const std::string& n : notes)
            std::cerr << "note: " << n << "\n";
    }
    const mw::Json constraints = constraintsJsonFor(args, problem, arch); // (errors name the file)
    mw::TimeloopMapper mapper;
    mapper.objective = args.opt("objective", "edp");
    mw::SearchObjective::parse(mapper.objective); // an unknown objective is an error
    // (Timeloop's mapper: 0 victory or timeout is no limit; 0 threads, all.)
    mapper.victoryCondition = wholeNumber(args, "victory", 500, 0, kMaxWholeOption);
    mapper.timeout = wholeNumber(args, "timeout", 1000, 0, kMaxWholeOption);
    mapper.threads = int(wholeNumber(args, "threads", 0, 0, mw::kMaxSearchThreads));
    try {
        for (const std::string& n :
             mw::exportTimeloop(problem, arch, mapping ? &*mapping : nullptr, out,
                                constraints.is_null() ? nullptr : &constraints, mapper))
            std::cerr << "note: " << n << "\n";
    } catch (const InputError& e) {
        if (args.has("constraints") && e.where() == "constraints")
            throw e.within(args.get("constraints"));
        throw;
    }
    std::cout << "wrote arch.yaml, problem.yaml, " << (args.has("mapping") ? "mapping.yaml, " : "")
              << "ERT.yaml, ART.yaml, mapper.yaml"
              << (constraints.is_null() ? "" : " and constraints.yaml") << " to " << out << "\n"
              << "timeloop-model "
              << (args.has("mapping") ? "arch.yaml problem.yaml mapping.yaml "
                                      : "arch.yaml problem.yaml MAPPING.yaml ")
              << "ERT.yaml ART.yaml\n"
              << "timeloop-mapper arch.yaml problem.yaml "
              << (constraints.is_null() ? "" : "constraints.yaml ")
              << "mapper.yaml ERT.yaml ART.yaml\n";
    return 0;
}

namespace {

// One architecture: each level's estimate beside the value in use.
int estimateArchitecture(const Args& args) {
    const mw::Architecture a = mw::loadArchitecture(args.get("arch"));
    const mw::ArchitectureEstimate e = mw::estimateArchitecture(a);
    auto cell = [](double inUse, mw::ValueSource src, double estimate) {
        std::string s = sig(inUse);
        if (src != mw::ValueSource::Estimated)
            s += std::string(src == mw::ValueSource::Imported ? " (ERT" : " (typed") +
                 (std::abs(inUse - estimate) > 1e-9 * std::max(1.0, std::abs(estimate))
                      ? "; est. " + sig(estimate) + ")"
                      : ")");
        return s;
    };
    std::cout << "architecture '" << a.name << "' at " << a.technologyNm
              << " nm (energies in pJ per access, leakage in pJ per cycle, areas in um^2 per "
                 "instance; pinned values show the estimate beside them)\n";
    std::cout << std::left << std::setw(24) << "level" << std::setw(34) << "read" << std::setw(34)
              << "write" << std::setw(34) << "leak"
              << "area\n";
    for (std::size_t l = 0; l < a.levels.size(); ++l) {
        const mw::StorageLevel& s = a.levels[l];
        const mw::StorageEstimate& se = e.levels[l];
        if (s.cls == mw::LevelClass::Dummy) {
            std::cout << std::left << std::setw(24) << s.name << "(dummy: no storage)";
            if (e.hopEnergy[l] > 0)
                std::cout << "; a hop between its children: " << sig(e.hopEnergy[l])
                          << " pJ per word over " << sig(e.hopMm[l]) << " mm";
            std::cout << "\n";
            continue;
        }
        std::cout << std::left << std::setw(24) << s.name << std::setw(34)
                  << cell(s.energy.read, s.sources.read, se.energy.read) << std::setw(34)
                  << cell(s.energy.write, s.sources.write, se.energy.write) << std::setw(34)
                  << cell(s.energy.leak, s.sources.leak, se.energy.leak)
                  << cell(s.area, s.sources.area, se.area) << "\n"
                  << "  " << se.basis;
        if (e.hopEnergy[l] > 0)
            std::cout << "; a hop between its children: " << sig(e.hopEnergy[l])
                      << " pJ per word over " << sig(e.hopMm[l]) << " mm";
        std::cout << "\n";
    }
    const mw::ComputeLevel& c = a.compute;
    std::cout << std::left << std::setw(24) << c.name << std::setw(34)
              << cell(c.macEnergy, c.energySource, e.compute.energy) << " per MAC, leak "
              << cell(c.leak, c.leakSource, e.compute.leak) << ", area "
              << cell(c.area, c.areaSource, e.compute.area) << "\n  " << e.compute.basis << "\n";
    std::cout << "on-chip area " << fixedText(e.onChipArea / 1e6, 3) << " mm^2 (storage "
              << fixedText(e.storageArea / 1e6, 3) << ", MACs " << fixedText(e.macArea / 1e6, 3)
              << ")\n";
    return 0;
}

// Timeloop cases: the estimator against their ERT and ART.
int estimateReferences(const Args& args) {
    struct Row {
        std::string label;
        mw::EstimateComparison c;
    };
    std::vector<Row> rows;
    for (const auto& ref : args.all("reference")) {
        std::vector<std::string> files;
        if (fs::is_directory(ref)) {
            // The tutorial's names, and the front end's (an exercise's ref_outputs).
            for (const char* name :
                 {"input.yaml", "ERT.yaml", "ART.yaml", "parsed-processed-input.yaml",
                  "timeloop-mapper.ERT.yaml", "timeloop-mapper.ART.yaml"})
                if (fs::exists(fs::path(ref) / name))
                    files.push_back((fs::path(ref) / name).string());
        } else {
            files.push_back(ref);
        }
        std::vector<mw::TimeloopText> texts;
        for (const auto& f : files)
            texts.push_back({f, mw::readTextFile(f)});
        const std::string label = fs::path(ref).filename().string();
        for (const auto& c : mw::compareWithTables(texts))
            rows.push_back({label, c});
    }
    if (rows.empty())
        throw InputError("estimate", "expected --arch A.json or --reference DIR (a Timeloop case "
                                     "with input.yaml, ERT.yaml and ART.yaml), repeatable");
    const double tolerance = number(args, "tolerance", 0.30);
    int within = 0;
    double worst = 1.0, logSum = 0.0;
    int finite = 0;
    std::cout << std::left << std::setw(34) << "case" << std::setw(18) << "component"
              << std::setw(9) << "action" << std::right << std::setw(12) << "ours" << std::setw(12)
              << "Accelergy" << std::setw(9) << "ratio"
              << "\n";
    for (const Row& r : rows) {
        const double ratio = r.c.ratio();
        const bool ok = std::isfinite(ratio) && ratio >= 1 - tolerance && ratio <= 1 + tolerance;
        within += ok;
        if (std::isfinite(ratio) && ratio > 0) {
            logSum += std::abs(std::log(ratio));
            ++finite;
            if (std::abs(std::log(ratio)) > std::abs(std::log(worst)))
                worst = ratio;
        }
        std::cout << std::left << std::setw(34) << r.label << std::setw(18) << r.c.component
                  << std::setw(9) << r.c.action << std::right << std::setw(12) << sig(r.c.ours)
                  << std::setw(12) << sig(r.c.theirs) << std::setw(9)
                  << (std::isfinite(ratio) ? fixedText(ratio, 3) : std::string("inf"))
                  << (ok ? "" : "  *") << "\n";
    }
    std::cout << within << " of " << rows.size() << " within " << fixedText(100 * tolerance, 0)
              << " % (* outside); geometric mean deviation "
              << fixedText(100 * (std::exp(finite ? logSum / finite : 0.0) - 1), 1)
              << " %, worst ratio " << fixedText(worst, 3) << "\n";
    return 0;
}

} // namespace

int cmdEstimate(const Args& args) {
    if (args.has("arch"))
        return estimateArchitecture(args);
    return estimateReferences(args);
}

} // namespace cli
