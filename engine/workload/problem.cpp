#include "workload/problem.h"

#include "common/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace mw {

int Problem::dimIndex(const std::string& n) const {
    for (int d = 0; d < numDims(); ++d)
        if (dims[d].name == n)
            return d;
    return -1;
}

int Problem::tensorIndex(const std::string& n) const {
    for (int t = 0; t < numTensors(); ++t)
        if (tensors[t].name == n)
            return t;
    return -1;
}

std::int64_t Problem::computes() const {
    std::int64_t n = 1;
    for (const auto& d : dims)
        n *= d.bound;
    return n;
}

std::int64_t Problem::rankExtent(int t, int r) const {
    const Rank& rank = tensors[t].ranks[r];
    std::int64_t extent = 1;
    for (int i = 0; i < rank.numTerms; ++i)
        extent += std::abs(rank.terms[i].coef) * (dims[rank.terms[i].dim].bound - 1);
    return extent;
}

std::int64_t Problem::tensorSize(int t) const {
    std::int64_t n = 1;
    for (int r = 0; r < tensors[t].numRanks; ++r)
        n *= rankExtent(t, r);
    return n;
}

namespace {

// The number of distinct values of sum coef_i x_i over 0 <= x_i < bound_i:
// the reachable offsets, one term at a time (a sliding window per residue of
// the coefficient keeps each term linear in the extent). Terms on the same
// dimension are one term (P + 3P takes the values 4p). Too wide to
// enumerate: the largest single bound, which is still a lower bound.
std::int64_t distinctRankValues(const Rank& rank, const std::vector<Dimension>& dims) {
    struct Term {
        std::int64_t coef, bound;
    };
    Term terms[kMaxTerms];
    int dimOf[kMaxTerms];
    int n = 0;
    for (int i = 0; i < rank.numTerms; ++i) {
        int k = 0;
        while (k < n && dimOf[k] != rank.terms[i].dim)
            ++k;
        if (k == n) {
            dimOf[n] = rank.terms[i].dim;
            terms[n++] = {0, dims[rank.terms[i].dim].bound};
        }
        terms[k].coef += rank.terms[i].coef;
    }
    std::int64_t extent = 1, widest = 1;
    for (int i = 0; i < n; ++i) {
        terms[i].coef = std::abs(terms[i].coef); // a negative one only mirrors its term
        if (terms[i].coef == 0 || terms[i].bound <= 1)
            continue;
        extent += terms[i].coef * (terms[i].bound - 1);
        widest = std::max(widest, terms[i].bound);
    }
    if (extent == widest) // at most one term, with coefficient 1
        return extent;
    constexpr std::int64_t kMaxExtent = std::int64_t(1) << 22;
    if (extent > kMaxExtent)
        return widest;
    const auto width = static_cast<std::size_t>(extent);
    std::vector<char> reach(width, 0), next(width, 0);
    reach[0] = 1;
    for (int i = 0; i < n; ++i) {
        const std::int64_t c = terms[i].coef;
        const std::int64_t b = terms[i].bound;
        if (c == 0 || b <= 1)
            continue;
        for (std::int64_t r = 0; r < c && r < extent; ++r) {
            std::int64_t inWindow = 0; // reachable among v - (b - 1) c, ..., v - c and v
            for (std::int64_t v = r, k = 0; v < extent; v += c, ++k) {
                inWindow += reach[std::size_t(v)];
                if (k >= b)
                    inWindow -= reach[std::size_t(v - b * c)];
                next[std::size_t(v)] = inWindow > 0;
            }
        }
        reach.swap(next);
    }
    return std::count(reach.begin(), reach.end(), 1);
}

} // namespace

std::int64_t Problem::touchedElements(int t) const {
    // Ranks over disjoint dimensions vary independently, so their counts
    // multiply; a rank sharing a dimension with one already counted is left
    // out (the count stays a lower bound).
    const DataSpace& ds = tensors[t];
    std::int64_t n = 1;
    std::uint32_t counted = 0;
    for (int r = 0; r < ds.numRanks; ++r) {
        const Rank& rank = ds.ranks[r];
        std::uint32_t dimsOfRank = 0;
        for (int i = 0; i < rank.numTerms; ++i)
            dimsOfRank |= 1u << rank.terms[i].dim;
        if (dimsOfRank & counted)
            continue;
        counted |= dimsOfRank;
        n *= rankTouched(t, r);
    }
    return n;
}

std::int64_t Problem::rankTouched(int t, int r) const {
    return distinctRankValues(tensors[t].ranks[r], dims);
}

void finalizeProblem(Problem& p) {
    const std::string where = p.name.empty() ? std::string("problem") : "problem '" + p.name + "'";
    if (p.dims.empty())
        throw InputError(where, "has no dimensions; expected at least one");
    if (p.numDims() > kMaxDims)
        throw InputError(where, "has " + std::to_string(p.numDims()) + " dimensions; at most " +
                                    std::to_string(kMaxDims) + " are supported");
    for (int d = 0; d < p.numDims(); ++d) {
        const Dimension& dim = p.dims[d];
        if (dim.name.empty())
            throw InputError(where + ".dimensions[" + std::to_string(d) + "]",
                             "name is empty; expected a dimension name");
        if (dim.bound <= 0 || dim.bound > (std::int64_t(1) << 31))
            throw InputError(where + ".dimensions." + dim.name,
                             "bound is " + std::to_string(dim.bound) +
                                 "; expected a positive integer up to 2^31");
        for (int e = 0; e < d; ++e)
            if (p.dims[e].name == dim.name)
                throw InputError(where + ".dimensions." + dim.name, "is defined twice");
    }
    if (p.tensors.empty())
        throw InputError(where, "has no data spaces; expected at least one tensor");
    if (p.numTensors() > kMaxTensors)
        throw InputError(where, "has " + std::to_string(p.numTensors()) + " data spaces; at most " +
                                    std::to_string(kMaxTensors) + " are supported");
    // The model counts in 64-bit integers and in doubles exact below 2^53:
    // computes, and each tensor's words (a tile over the whole problem, the
    // largest a level can hold), stay below 2^50, where no product of the
    // counts overflows or rounds. (A GEMM of 2^21 in each dimension counted
    // a negative number of cycles.)
    constexpr double kMaxCount = double(std::int64_t(1) << 50);
    auto approx = [](double v) {
        char text[32];
        std::snprintf(text, sizeof text, "%.3g", v);
        return std::string(text);
    };
    double computes = 1.0;
    for (const Dimension& dim : p.dims)
        computes *= double(dim.bound);
    if (computes > kMaxCount)
        throw InputError(where, "has " + approx(computes) +
                                    " computes (the product of its bounds); at most 2^50 are "
                                    "supported");
    for (auto& ds : p.tensors) {
        const std::string tw = where + ".tensors." + ds.name;
        if (ds.name.empty())
            throw InputError(where, "a data space has an empty name");
        // (Keep, bypass and every report name tensors: two of one name could
        // not be told apart, and an export would write both.)
        if (p.tensorIndex(ds.name) != int(&ds - p.tensors.data()))
            throw InputError(tw, "is defined twice; expected one data space of each name");
        double words = 1.0;
        for (int r = 0; r < ds.numRanks; ++r) {
            double extent = 1.0;
            for (int i = 0; i < ds.ranks[r].numTerms; ++i) {
                const auto& term = ds.ranks[r].terms[i];
                if (term.dim >= 0 && term.dim < p.numDims())
                    extent += std::abs(double(term.coef)) * double(p.dims[term.dim].bound - 1);
            }
            words *= extent;
        }
        if (words > kMaxCount)
            throw InputError(tw, "spans " + approx(words) +
                                     " words over the whole problem; at most 2^50 are supported");
        if (!(ds.density > 0.0 && ds.density <= 1.0))
            throw InputError(tw + ".density",
                             "is " + std::to_string(ds.density) + "; expected a value in (0, 1]");
        ds.dimMask = 0;
        for (int r = 0; r < ds.numRanks; ++r)
            for (int i = 0; i < ds.ranks[r].numTerms; ++i) {
                const auto& term = ds.ranks[r].terms[i];
                if (term.dim < 0 || term.dim >= p.numDims())
                    throw InputError(tw, "refers to an unknown dimension");
                if (term.coef == 0)
                    throw InputError(tw, "has a zero coefficient on dimension " +
                                             p.dims[term.dim].name);
                ds.dimMask |= 1u << term.dim;
            }
    }
}

Problem makeProblem(std::string name, const std::vector<Dimension>& dims,
                    const std::vector<TensorSpec>& tensors,
                    std::vector<std::pair<std::string, std::int64_t>> coefficients) {
    Problem p;
    p.name = std::move(name);
    p.dims = dims;
    p.coefficients = std::move(coefficients);
    for (const auto& spec : tensors) {
        DataSpace ds;
        ds.name = spec.name;
        ds.readWrite = spec.readWrite;
        const std::string tw = "problem '" + p.name + "'.tensors." + spec.name;
        if (static_cast<int>(spec.ranks.size()) > kMaxRanks)
            throw InputError(tw, "has more than " + std::to_string(kMaxRanks) + " coordinates");
        for (const auto& rankSpec : spec.ranks) {
            Rank& rank = ds.ranks[ds.numRanks++];
            if (rankSpec.empty())
                throw InputError(tw, "has an empty coordinate expression");
            if (static_cast<int>(rankSpec.size()) > kMaxTerms)
                throw InputError(tw, "a coordinate has more than " + std::to_string(kMaxTerms) +
                                         " terms");
            for (const auto& [dimName, coef] : rankSpec) {
                const int d = p.dimIndex(dimName);
                if (d < 0)
                    throw InputError(tw, "uses unknown dimension '" + dimName + "'");
                rank.terms[rank.numTerms++] = {d, coef};
            }
        }
        p.tensors.push_back(ds);
    }
    finalizeProblem(p);
    return p;
}

bool Problem::sparse() const {
    for (const auto& t : tensors)
        if (t.density < 1.0)
            return true;
    return false;
}

} // namespace mw
