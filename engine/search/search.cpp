#include "search/search.h"

#include "arch/architecture.h"
#include "common/error.h"
#include "search/searchers.h"

#include <algorithm>
#include <cmath>

namespace mw {

const std::vector<std::string>& searcherNames() {
    static const std::vector<std::string> names = {
        "random", "random-pruned", "exhaustive",    "annealing", "genetic",
        "gamma",  "cosa",          "mind-mappings", "reinforce", "optimal"};
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
    if (name == "optimal")
        return makeOptimalSearch();
    std::string known;
    for (const auto& n : searcherNames())
        known += (known.empty() ? "" : ", ") + n;
    throw InputError("--searcher", "unknown searcher '" + name + "'" +
                                       didYouMean(name, searcherNames()) + "; expected one of " +
                                       known);
}

double provenOptimum(const SearchResult& r) {
    const auto proven = r.stats.find("proven");
    return r.searcher == "optimal" && r.found && proven != r.stats.end() && proven->second == 1.0
               ? r.bestCost
               : 0.0;
}

// A true lower bound under bypass. The outermost level holds every tensor, so
// each element a computation touches crosses it at least once (read, or for
// outputs updated); every other level may be bypassed, so none is charged.
// (Mind Mappings' algorithmic minimum charges every level of an inclusive
// hierarchy; with bypass a mapping beats it by up to the on-chip share.)
// Cycles: every MAC busy, and the outermost level's bandwidth moving those
// words once. Sparse tensors count as the model counts them: nonzeros move,
// effectual MACs compute (rounded down, as the model rounds its expected
// counts to the nearest integer). Leakage accrues over the bound's cycles.
namespace {

// The bound's energy and cycles at the problem's own densities, and their
// value under objective o.
LowerBound boundAt(const Problem& p, const Architecture& a, const SearchObjective& o) {
    LowerBound lb;
    double effectual = 1.0;
    for (int t = 0; t < p.numTensors(); ++t)
        if (!p.tensors[t].readWrite)
            effectual *= p.tensors[t].density;
    const double computes = std::max(1.0, std::floor(double(p.computes()) * effectual));
    double energy = computes * a.compute.macEnergy;
    double cycles =
        std::max(1.0, std::floor(double(p.computes()) * effectual / double(a.compute.instances())));
    // Leakage is charged per utilized instance and cycle. A level's utilized
    // instances u times the cycles is at least its instances x the cycles with
    // every MAC busy (the MACs under u instances do all the work), whatever
    // else stretches the run.
    const double busyCycles = double(p.computes()) * effectual / double(a.compute.instances());
    if (!a.levels.empty()) {
        const StorageLevel& top = a.levels.front();
        const double instances = double(top.instances());
        double reads = 0.0, updates = 0.0;
        for (int t = 0; t < p.numTensors(); ++t) {
            const double words = std::floor(double(p.touchedElements(t)) * p.tensors[t].density);
            (p.tensors[t].readWrite ? updates : reads) += words;
        }
        energy += (reads * top.energy.read + updates * top.energy.update) /
                  (double(top.blockSize) * double(top.clusterSize));
        if (top.readBandwidth > 0)
            cycles = std::max(cycles, reads / (top.readBandwidth * instances));
        if (top.writeBandwidth > 0)
            cycles = std::max(cycles, updates / (top.writeBandwidth * instances));
    }
    for (const StorageLevel& s : a.levels)
        energy += s.energy.leak * busyCycles * double(s.instances());
    lb.energy = energy;
    lb.cycles = cycles;
    lb.edp = energy * 1e-12 * cycles;
    lb.objective = o.value(lb.energy, lb.cycles);
    return lb;
}

} // namespace

LowerBound lowerBound(const Problem& p, const Architecture& a, const SearchObjective& o) {
    LowerBound lb = boundAt(p, a, o);
    // The sparsity-aware score sums cost_d / d over imposed densities; its
    // bound is the same sum of the bounds.
    const int t = o.densityTensor.empty() ? -1 : p.tensorIndex(o.densityTensor);
    if (t >= 0 && !o.densities.empty()) {
        lb.objective = 0.0;
        for (double d : o.densities) {
            Problem q = p;
            q.tensors[std::size_t(t)].density = d;
            lb.objective += boundAt(q, a, o).objective / d;
        }
    }
    return lb;
}

} // namespace mw
