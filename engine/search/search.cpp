#include "search/search.h"

#include "arch/architecture.h"
#include "common/error.h"
#include "search/searchers.h"

namespace mw {

const std::vector<std::string>& searcherNames() {
    static const std::vector<std::string> names = {"random",    "random-pruned", "exhaustive",
                                                   "annealing", "genetic",       "gamma",
                                                   "cosa",      "mind-mappings", "reinforce"};
    return names;
}

std::unique_ptr<Searcher> makeSearcher(const std::string& name) {
    if (name == "random")
        return makeRandomSearch();
    if (name == "random-pruned")
        return makeRandomPrunedSearch();
    if (name == "exhaustive")
        return makeExhaustiveSearch();
    if (name == "annealing")
        return makeAnnealingSearch();
    if (name == "genetic")
        return makeGeneticSearch();
    if (name == "gamma")
        return makeGammaSearch();
    if (name == "cosa")
        return makeCosaSearch();
    if (name == "mind-mappings")
        return makeMindMappingsSearch();
    if (name == "reinforce")
        return makeReinforceSearch();
    std::string known;
    for (const auto& n : searcherNames())
        known += (known.empty() ? "" : ", ") + n;
    throw InputError("--searcher", "unknown searcher '" + name + "'; expected one of " + known);
}

// Mind Mappings' algorithmic minimum (its paper, Sec. on EDP_min): every word of
// every tensor read (or, for outputs, written) once at each level of an
// inclusive hierarchy, and every MAC busy every cycle. With bypass a mapping
// can beat it, so it is a normaliser for reports, not a proof.
LowerBound lowerBound(const Problem& p, const Architecture& a, const SearchObjective& o) {
    LowerBound lb;
    double energy = double(p.computes()) * a.compute.macEnergy;
    for (const auto& s : a.levels) {
        if (s.cls == LevelClass::Dummy)
            continue;
        for (int t = 0; t < p.numTensors(); ++t) {
            const double perWord =
                (p.tensors[t].readWrite ? s.energy.update : s.energy.read) / s.blockSize;
            energy += double(p.tensorSize(t)) * perWord;
        }
    }
    lb.energy = energy;
    lb.cycles = double(p.computes()) / double(a.compute.instances());
    lb.edp = energy * 1e-12 * lb.cycles;
    Evaluation e;
    e.energy = lb.energy;
    e.cycles = static_cast<std::int64_t>(lb.cycles + 0.5);
    e.edp = lb.edp;
    lb.objective = o.value(e);
    return lb;
}

} // namespace mw
