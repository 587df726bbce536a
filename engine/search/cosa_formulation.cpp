// CoSA's MIP (cosa_model.h): variables, constraints and objective, as
// cosa_search.cpp describes them against the paper.
#include "search/cosa_model.h"

#include "arch/architecture.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace mw::cosa {

// The term of a rank with the largest |coefficient| above 1 (in P*stride + R,
// the P term) as (dimension, stride); (-1, 1) when every coefficient is 1.
std::pair<int, std::int64_t> stridedTerm(const Rank& rank) {
    int dim = -1;
    std::int64_t stride = 1;
    for (int i = 0; i < rank.numTerms; ++i)
        if (std::abs(rank.terms[i].coef) > stride) {
            stride = std::abs(rank.terms[i].coef);
            dim = rank.terms[i].dim;
        }
    return {dim, stride};
}

namespace {

double binaryEntropy(double s) {
    return s <= 0.0 || s >= 1.0 ? 0.0 : -s * std::log2(s) - (1.0 - s) * std::log2(1.0 - s);
}

} // namespace

SharedCapacity::SharedCapacity() {
    // Planes touching at a - b = -5..5 (s = 1 / (1 + 2^(b - a))), and the two
    // ends (a alone, b alone): 1.4 % of the capacity at most is lost.
    weight.push_back(0.0);
    for (int r = -5; r <= 5; ++r)
        weight.push_back(1.0 / (1.0 + std::exp2(-double(r))));
    weight.push_back(1.0);
    for (double s : weight)
        entropy.push_back(binaryEntropy(s));
    // With b = 0 the sum is f(r) = log2(1 + 2^r), convex, and f minus the
    // largest plane is largest where two neighbouring planes cross.
    slack = 0.0;
    for (std::size_t i = 0; i + 1 < weight.size(); ++i) {
        const double r = (entropy[i] - entropy[i + 1]) / (weight[i + 1] - weight[i]);
        double planes = -kInf;
        for (std::size_t j = 0; j < weight.size(); ++j)
            planes = std::max(planes, weight[j] * r + entropy[j]);
        slack = std::max(slack, std::log2(1.0 + std::exp2(r)) - planes);
    }
}

double SharedCapacity::upper(double a, double b) const {
    double planes = -kInf;
    for (std::size_t j = 0; j < weight.size(); ++j)
        planes = std::max(planes, weight[j] * a + (1.0 - weight[j]) * b + entropy[j]);
    return planes + slack;
}

CosaModel::CosaModel(const MapSpace& space, double wUtil, double wComp, double wTraf,
                     double wEnergy, bool rankAll)
    : space_(space), p_(space.problem()), a_(space.arch()), wUtil_(wUtil), wComp_(wComp),
      wTraf_(wTraf), wEnergy_(wEnergy) {
    minLogE_ = 0.0;
    for (const StorageLevel& s : a_.levels)
        for (double e : {s.energy.read, s.energy.update})
            if (e > 0)
                minLogE_ = std::min(minLogE_, std::log2(e / std::max(1, s.blockSize)));
    const int L = a_.numLevels();
    const int D = p_.numDims();
    const auto& cons = space_.constraints().levels;
    primes_.assign(static_cast<std::size_t>(D), {});
    for (int d = 0; d < D; ++d) {
        std::int64_t fixed = 1;
        for (int l = 0; l < L; ++l) {
            const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
            for (std::int64_t f : {lc.temporal[d], lc.spatialX[d], lc.spatialY[d]})
                if (f > 0)
                    fixed *= f;
        }
        for (std::int64_t q : primeFactors(p_.dims[d].bound / fixed))
            primes_[static_cast<std::size_t>(d)].push_back(q);
    }
    // The NoC level: the outermost level that fans out (the released code's
    // global buffer). Its temporal loops live at the nearest real level above.
    noc_ = -1;
    for (int l = 0; l < L && noc_ < 0; ++l)
        if (a_.fanoutX(l) * a_.fanoutY(l) > 1)
            noc_ = l;
    int nocTemporal = -1;
    for (int l = noc_; l >= 0 && nocTemporal < 0; --l)
        if (space_.levelHasTemporal(l))
            nocTemporal = l;
    ranked_.assign(static_cast<std::size_t>(L), false);
    for (int l = 0; l < L; ++l)
        ranked_[static_cast<std::size_t>(l)] = space_.levelHasTemporal(l) &&
                                               !cons[static_cast<std::size_t>(l)].order.fixes(D) &&
                                               (rankAll || l == 0 || l == nocTemporal);
}

MipSolution CosaModel::solve(double seconds, int maxNodes, const std::function<bool()>& cancelled) {
    build();
    MipOptions options;
    options.seconds = seconds;
    options.maxNodes = maxNodes;
    options.localBranching = localBranching;
    options.strongBranching = strongBranching;
    options.rootCuts = rootCuts;
    options.feasibilityPump = feasibilityPump;
    if (startMapping) {
        startFrom(*startMapping, options.startCols, options.startValues);
        if (options.startCols.empty() ||
            !keepStart(*startMapping, options.startCols, options.startValues))
            options.startCols.clear(), options.startValues.clear();
    } else if (greedyStartMode > 0) {
        greedyStart(options.startCols, options.startValues);
    }
    return solveMip(mip_, options, cancelled);
}

std::string CosaModel::infeasibleReason() const {
    std::ostringstream os;
    for (int l = 1; l < a_.numLevels(); ++l) {
        const StorageLevel& s = a_.levels[static_cast<std::size_t>(l)];
        if (!space_.levelHasTemporal(l) || s.unbounded())
            continue;
        bool anyPattern = false;
        for (const auto& [col, mask] : patternVars_[static_cast<std::size_t>(l)]) {
            (void)col;
            std::array<double, kMaxTensors> logs{};
            for (int t = 0; t < p_.numTensors(); ++t)
                logs[static_cast<std::size_t>(t)] = fixedTileLog(l, t);
            anyPattern = anyPattern || fitsCapacity(l, mask, logs);
        }
        if (!anyPattern) {
            os << "level " << s.name << " (" << s.capacityWords
               << " words) cannot hold the tiles its fixed factors and keep constraints "
                  "require";
            return os.str();
        }
    }
    os << "no assignment of the prime factors meets every buffer capacity ("
       << "log-space tile model, the tiles a buffer keeps summed), fan-out and "
          "user constraint at once";
    return os.str();
}

double CosaModel::wordEnergy(int l, int t) const {
    const StorageLevel& s = a_.levels[static_cast<std::size_t>(l)];
    return (p_.tensors[t].readWrite ? s.energy.update : s.energy.read) / std::max(1, s.blockSize);
}

double CosaModel::avail(int l) const {
    const StorageLevel& s = a_.levels[static_cast<std::size_t>(l)];
    return double(s.capacityWords) / s.multipleBuffering;
}

double CosaModel::capLog(int l, int t) const {
    return std::log2(avail(l)) - tighten[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)];
}

bool CosaModel::fitsCapacity(int l, unsigned mask,
                             const std::array<double, kMaxTensors>& logs) const {
    if (a_.levels[static_cast<std::size_t>(l)].unbounded())
        return true;
    const double cap = std::log2(avail(l));
    double sum = 0.0; // log2 of the tiles so far (tightened), as the rows bound it
    int kept = 0;
    for (int t = 0; t < p_.numTensors(); ++t) {
        if (!((mask >> t) & 1u))
            continue;
        const double y = logs[static_cast<std::size_t>(t)] +
                         tighten[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)];
        if (y > cap + kEps)
            return false;
        sum = kept++ == 0 ? y : shared_.upper(sum, y);
    }
    return sum <= cap + kEps;
}

std::int64_t CosaModel::fixedAt(int l, int d) const {
    const LevelConstraint& lc = space_.constraints().levels[static_cast<std::size_t>(l)];
    std::int64_t f = 1;
    for (std::int64_t v : {lc.temporal[d], lc.spatialX[d], lc.spatialY[d]})
        if (v > 0)
            f *= v;
    return f;
}

double CosaModel::fixedTileLog(int l, int t) const {
    double s = 0.0;
    for (int k = l; k < a_.numLevels(); ++k)
        for (int d = 0; d < p_.numDims(); ++d)
            if (depends(t, d))
                s += std::log2(double(fixedAt(k, d)));
    return s;
}

void CosaModel::addDimTerms(std::vector<std::pair<int, double>>& terms, int d, int fromLevel,
                            int toLevel, unsigned kinds, double scale) const {
    const auto& slots = space_.factorSlots(d);
    const auto& xs = xVars_[static_cast<std::size_t>(d)];
    for (std::size_t n = 0; n < xs.size(); ++n) {
        const double lp = std::log2(double(primes_[static_cast<std::size_t>(d)][n]));
        for (std::size_t s = 0; s < slots.size(); ++s)
            if (slots[s].level >= fromLevel && slots[s].level <= toLevel &&
                ((kinds >> slots[s].kind) & 1u))
                terms.push_back({xs[n][s], scale * lp});
    }
}

int CosaModel::spanIndicator(int d, int l, bool lower, bool upper) {
    bool fixedSpan = false;
    for (int k = l; k < a_.numLevels(); ++k)
        fixedSpan = fixedSpan || fixedAt(k, d) > 1;
    const int z = mip_.col(fixedSpan ? 1.0 : 0.0, 1.0, 0.0, false);
    std::vector<std::pair<int, double>> inside;
    addDimTerms(inside, d, l, a_.numLevels() - 1, 7u);
    if (lower)
        for (const auto& [c, v] : inside) {
            (void)v;
            mip_.row({{z, 1.0}, {c, -1.0}}, 0.0, kInf);
        }
    if (upper && !fixedSpan) {
        std::vector<std::pair<int, double>> row{{z, 1.0}};
        for (const auto& [c, v] : inside) {
            (void)v;
            row.push_back({c, -1.0});
        }
        mip_.row(row, -kInf, 0.0);
    }
    return z;
}

void CosaModel::sharedCapacityRows(int l, const std::vector<Affine>& sized) {
    const double cap = std::log2(avail(l));
    const SharedCapacity& sc = shared_;
    auto highest = [&](const Affine& a) { return range(a, mip_).second; };
    // The rows "plane(a, b) + slack <= rhs + big (1 - gate)" for every plane,
    // with `extra` (coefficient) on the left: -1 for a column that must lie
    // above the sum, the gate's column when it is one.
    auto planes = [&](const Affine& a, const Affine& b, std::pair<int, double> extra, double rhs,
                      double big) {
        for (std::size_t j = 0; j < sc.weight.size(); ++j) {
            const double s = sc.weight[j];
            std::vector<std::pair<int, double>> row;
            for (const auto& [c, v] : a.terms)
                row.push_back({c, s * v});
            for (const auto& [c, v] : b.terms)
                row.push_back({c, (1.0 - s) * v});
            row.push_back(extra);
            const double constant =
                s * a.constant + (1.0 - s) * b.constant + sc.entropy[j] + sc.slack;
            mip_.row(row, -kInf, rhs - constant + big);
        }
    };
    // log2 of the summed tiles of mask's tensors, from above: a tensor's own
    // expression, or a column per set of two or more (made once, in tensor
    // order, each pair chained to the next tensor).
    std::map<unsigned, int> sumColumns;
    auto sumOf = [&](unsigned mask) {
        Affine sum;
        unsigned prefix = 0;
        for (int t = 0; t < p_.numTensors(); ++t) {
            if (!((mask >> t) & 1u))
                continue;
            const Affine& one = sized[static_cast<std::size_t>(t)];
            prefix |= 1u << t;
            if (prefix == (1u << t)) {
                sum = one;
                continue;
            }
            auto [it, made] = sumColumns.try_emplace(prefix, -1);
            if (made) {
                const double hi = std::max(highest(sum), highest(one)) + 1.0 + sc.slack;
                it->second = mip_.col(0.0, hi, 0.0, false);
                planes(sum, one, {it->second, -1.0}, 0.0, 0.0); // plane + slack <= column
            }
            sum = Affine{0.0, {{it->second, 1.0}}};
        }
        return sum;
    };
    for (const auto& [z, mask] : patternVars_[static_cast<std::size_t>(l)]) {
        if (__builtin_popcount(mask) < 2)
            continue;
        const int last = 31 - __builtin_clz(mask);
        const Affine rest = sumOf(mask & ~(1u << last));
        const Affine& one = sized[static_cast<std::size_t>(last)];
        // Off (any value) unless the pattern is chosen: big covers the largest plane.
        const double big =
            std::max(0.0, std::max(highest(rest), highest(one)) + 1.0 + sc.slack - cap);
        planes(rest, one, {z, big}, cap, big);
    }
}

void CosaModel::build() {
    mip_ = MipProblem();
    hasLoop_.assign(static_cast<std::size_t>(a_.numLevels() * kMaxDims), -1);
    const int L = a_.numLevels();
    const int D = p_.numDims();
    const int T = p_.numTensors();
    const auto& cons = space_.constraints().levels;
    if (tighten.empty())
        tighten.assign(static_cast<std::size_t>(L),
                       std::vector<double>(static_cast<std::size_t>(T), 0.0));

    // x: every free prime in exactly one slot; temporal slots carry Comp (Eq. 6).
    xVars_.assign(static_cast<std::size_t>(D), {});
    for (int d = 0; d < D; ++d) {
        const auto& slots = space_.factorSlots(d);
        const auto& primes = primes_[static_cast<std::size_t>(d)];
        auto& xs = xVars_[static_cast<std::size_t>(d)];
        for (std::size_t n = 0; n < primes.size(); ++n) {
            std::vector<int> cols;
            std::vector<std::pair<int, double>> one;
            for (const auto& s : slots) {
                (void)s;
                const int c = mip_.col(0.0, 1.0, 0.0, true);
                cols.push_back(c);
                one.push_back({c, 1.0});
            }
            mip_.row(one, 1.0, 1.0);
            xs.push_back(cols);
        }
        // Symmetry: equal primes take non-decreasing slot indices.
        for (std::size_t n = 0; n + 1 < primes.size(); ++n) {
            if (primes[n] != primes[n + 1])
                continue;
            std::vector<std::pair<int, double>> row;
            for (std::size_t s = 0; s < slots.size(); ++s) {
                row.push_back({xs[n][s], double(s)});
                row.push_back({xs[n + 1][s], -double(s)});
            }
            mip_.row(row, -kInf, 0.0);
        }
    }

    // Timeloop's map space: a dimension fans out on one axis of a level at
    // most (its split puts each spatial loop on X or Y). A binary per level
    // and dimension picks the axis its primes may take there.
    for (int d = 0; d < D; ++d) {
        const auto& slots = space_.factorSlots(d);
        const auto& xs = xVars_[static_cast<std::size_t>(d)];
        if (xs.size() < 2)
            continue; // one prime cannot be on two axes
        for (std::size_t sx = 0; sx < slots.size(); ++sx) {
            if (slots[sx].kind != 1)
                continue;
            for (std::size_t sy = 0; sy < slots.size(); ++sy) {
                if (slots[sy].kind != 2 || slots[sy].level != slots[sx].level)
                    continue;
                const int onX = mip_.col(0.0, 1.0, 0.0, true);
                for (const auto& cols : xs) {
                    mip_.row({{cols[sx], 1.0}, {onX, -1.0}}, -kInf, 0.0);
                    mip_.row({{cols[sy], 1.0}, {onX, 1.0}}, -kInf, 1.0);
                }
            }
        }
    }

    // Comp (Eq. 6) enters through cyc >= log2 of the temporal iterations;
    // with a DRAM bandwidth, cyc >= log2(DRAM words / bandwidth) too (below).
    cyc_ = mip_.col(0.0, kInf, wComp_, false);
    {
        std::vector<std::pair<int, double>> row{{cyc_, 1.0}};
        double fixed = 0.0;
        for (int d = 0; d < D; ++d) {
            std::vector<std::pair<int, double>> terms;
            addDimTerms(terms, d, 0, L - 1, 1u);
            for (const auto& [c, v] : terms)
                row.push_back({c, -v});
            for (int l = 0; l < L; ++l)
                if (cons[static_cast<std::size_t>(l)].temporal[d] > 0)
                    fixed += std::log2(double(cons[static_cast<std::size_t>(l)].temporal[d]));
        }
        mip_.row(row, fixed, kInf);
    }

    // Spatial resources (Eq. 4), per level and axis.
    for (int l = 0; l < L; ++l)
        for (int axis = 1; axis <= 2; ++axis) {
            const int fan = axis == 1 ? a_.fanoutX(l) : a_.fanoutY(l);
            const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
            double fixed = 0.0;
            std::vector<std::pair<int, double>> row;
            for (int d = 0; d < D; ++d) {
                const std::int64_t f = axis == 1 ? lc.spatialX[d] : lc.spatialY[d];
                if (f > 0)
                    fixed += std::log2(double(f));
                addDimTerms(row, d, l, l, 1u << axis);
            }
            if (!row.empty())
                mip_.row(row, -kInf, std::log2(double(fan)) - fixed + kEps);
        }
    if (space_.constraints().minSpatialUtilization > 0.0) {
        double fixed = 0.0;
        std::vector<std::pair<int, double>> row;
        for (int l = 0; l < L; ++l)
            for (int d = 0; d < D; ++d) {
                const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
                for (std::int64_t f : {lc.spatialX[d], lc.spatialY[d]})
                    if (f > 0)
                        fixed += std::log2(double(f));
                addDimTerms(row, d, l, l, 6u);
            }
        const double need =
            std::log2(space_.constraints().minSpatialUtilization * double(a_.compute.instances()));
        mip_.row(row, need - fixed - kEps, kInf);
    }

    // Keep patterns, capacities (Eqs. 1-2) and utilization (Eq. 5).
    patternVars_.assign(static_cast<std::size_t>(L), {});
    const double keepBonus = 1e-3 * std::max(wUtil_, 1e-3);
    for (int l = 1; l < L; ++l) {
        if (!space_.levelHasTemporal(l))
            continue;
        const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
        const StorageLevel& s = a_.levels[static_cast<std::size_t>(l)];
        const bool bounded = !s.unbounded();
        auto& zs = patternVars_[static_cast<std::size_t>(l)];
        std::vector<std::pair<int, double>> one;
        for (unsigned mask = 0; mask < (1u << T); ++mask) {
            if (!lc.keepsHold(mask))
                continue;
            if (static_cast<std::size_t>(l) < keepMasks.size() &&
                keepMasks[static_cast<std::size_t>(l)] >= 0 &&
                int(mask) != keepMasks[static_cast<std::size_t>(l)])
                continue;
            const int kept = __builtin_popcount(mask);
            if (bounded && avail(l) < kept) // not a word for each
                continue;
            const int c = mip_.col(0.0, 1.0, -keepBonus * kept, true);
            zs.push_back({c, mask});
            one.push_back({c, 1.0});
        }
        if (one.empty()) { // nothing fits: an infeasible row that says so
            mip_.row({}, 1.0, 1.0);
            continue;
        }
        mip_.row(one, 1.0, 1.0);
        if (!bounded)
            continue;
        // Per tensor, log2 of its tile plus halo and tightening.
        std::vector<Affine> sized(static_cast<std::size_t>(T));
        for (int t = 0; t < T; ++t) {
            // log2 tile = sum of the factors of t's dimensions at levels >= l.
            std::vector<std::pair<int, double>> tile;
            for (int d = 0; d < D; ++d)
                if (depends(t, d))
                    addDimTerms(tile, d, l, L - 1, 7u);
            const double fixedLog = fixedTileLog(l, t);
            double maxTile = fixedLog;
            for (const auto& [c, v] : tile) {
                (void)c;
                maxTile += v;
            }
            // Strided coordinates: while only the strided dimension spans the
            // tile, its extent is about stride x its factor.
            std::vector<std::pair<int, double>> halo;
            const DataSpace& ds = p_.tensors[t];
            for (int r = 0; r < ds.numRanks; ++r) {
                const Rank& rank = ds.ranks[r];
                const auto [strided, coef] = stridedTerm(rank);
                if (strided < 0)
                    continue;
                const int g = mip_.col(0.0, 1.0, 0.0, false);
                std::vector<std::pair<int, double>> row{
                    {g, 1.0}, {spanIndicator(strided, l, true, false), -1.0}};
                for (int i = 0; i < rank.numTerms; ++i)
                    if (rank.terms[i].dim != strided)
                        row.push_back({spanIndicator(rank.terms[i].dim, l, false, true), 1.0});
                mip_.row(row, 0.0, kInf); // g >= span(strided) - sum span(others)
                halo.push_back({g, std::log2(double(coef))});
                maxTile += std::log2(double(coef));
            }
            // tile + halo <= capacity (or anything when not kept); tiles kept
            // together are summed below.
            std::vector<std::pair<int, double>> row = tile;
            row.insert(row.end(), halo.begin(), halo.end());
            const double tightened =
                tighten[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)];
            sized[static_cast<std::size_t>(t)] = Affine{fixedLog + tightened, row};
            for (const auto& [c, mask] : zs) {
                const bool kept = (mask >> t) & 1u;
                row.push_back({c, -(kept ? capLog(l, t) : maxTile + 1.0)});
            }
            mip_.row(row, -kInf, -fixedLog + kEps);
            // Utilization: u <= tile and u <= log2(capacity) x kept; maximized.
            const double cap = std::log2(avail(l));
            const int u = mip_.col(0.0, std::max(0.0, cap), -wUtil_, false);
            std::vector<std::pair<int, double>> urow{{u, 1.0}};
            for (const auto& [c, v] : tile)
                urow.push_back({c, -v});
            mip_.row(urow, -kInf, fixedLog);
            std::vector<std::pair<int, double>> krow{{u, 1.0}};
            for (const auto& [c, mask] : zs)
                if ((mask >> t) & 1u)
                    krow.push_back({c, -std::max(0.0, cap)});
            mip_.row(krow, -kInf, 0.0);
        }
        sharedCapacityRows(l, sized);
    }

    // Operand energy: every MAC reads each tensor from its innermost keeper;
    // inner[l] >= keep here - keeps further in marks that level, and
    // operandLog[t] = log2(MACs) + log2(pJ per word there) feeds the energy
    // estimate below (shifted so the coefficients are >= 0).
    operandLog_.assign(static_cast<std::size_t>(T), {});
    innermost_.assign(static_cast<std::size_t>(T), {});
    const double logMacs = std::log2(double(p_.computes()));
    for (int t = 0; t < T; ++t) {
        auto& terms = operandLog_[static_cast<std::size_t>(t)];
        terms.constant = logMacs + minLogE_;
        for (int l = 0; l < L; ++l) {
            if (l > 0 && patternVars_[static_cast<std::size_t>(l)].empty())
                continue;
            const double e = wordEnergy(l, t);
            if (!(e > 0))
                continue;
            std::vector<std::pair<int, double>> row;
            double rhs = 0.0; // keep here, minus keeps further in
            if (l == 0)
                rhs = 1.0;
            else
                for (const auto& [c, mask] : patternVars_[static_cast<std::size_t>(l)])
                    if ((mask >> t) & 1u)
                        row.push_back({c, -1.0});
            for (int j = l + 1; j < L; ++j)
                for (const auto& [c, mask] : patternVars_[static_cast<std::size_t>(j)])
                    if ((mask >> t) & 1u)
                        row.push_back({c, 1.0});
            const int inner = mip_.col(0.0, 1.0, 0.0, false);
            row.push_back({inner, 1.0});
            mip_.row(row, rhs, kInf);
            terms.terms.push_back({inner, std::log2(e) - minLogE_});
            innermost_[static_cast<std::size_t>(t)].push_back({l, inner});
        }
    }

    // Traffic at the NoC level (Eqs. 7-8), the paper's own term (w_traf): the
    // tile below it and the unicast spatial factors, per tensor.
    if (noc_ >= 0 && wTraf_ > 0)
        for (int t = 0; t < T; ++t)
            for (int d = 0; d < D; ++d) {
                if (!depends(t, d))
                    continue;
                std::vector<std::pair<int, double>> terms;
                addDimTerms(terms, d, noc_ + 1, L - 1, 7u); // D_v
                addDimTerms(terms, d, noc_, noc_, 6u);      // L_v
                for (const auto& [c, v] : terms)
                    mip_.addCost(c, wTraf_ * v);
            }

    // Loop orders at the ranked levels (their re-send iterations, Eqs. 9-10,
    // cost w_traf there), then the traffic and energy of every level.
    ranks_.assign(static_cast<std::size_t>(L), {});
    for (int l = 0; l < L; ++l)
        if (ranked_[static_cast<std::size_t>(l)])
            buildRanks(l);
    buildTraffic();
    if (fixedTiling) {
        std::vector<int> cols;
        std::vector<double> values;
        startFrom(*fixedTiling, cols, values);
        for (std::size_t i = 0; i < cols.size(); ++i)
            mip_.row({{cols[i], 1.0}}, values[i], values[i]);
    }
}

bool CosaModel::keepsFree() const {
    const auto& cons = space_.constraints().levels;
    for (int l = 1; l < a_.numLevels(); ++l) {
        const LevelConstraint& lc = cons[static_cast<std::size_t>(l)];
        if (space_.levelHasTemporal(l) &&
            (lc.keepFixed & ((1u << p_.numTensors()) - 1)) != ((1u << p_.numTensors()) - 1))
            return true;
    }
    return false;
}

int CosaModel::hasLoop(int k, int d) {
    auto& slot = hasLoop_[static_cast<std::size_t>(k * kMaxDims + d)];
    if (slot >= 0)
        return slot;
    slot = mip_.col(0.0, 1.0, 0.0, false);
    std::vector<std::pair<int, double>> terms;
    addDimTerms(terms, d, k, k, 1u);
    for (const auto& [x, v] : terms) {
        (void)v;
        mip_.row({{slot, 1.0}, {x, -1.0}}, 0.0, kInf);
    }
    return slot;
}

int CosaModel::gated(const std::vector<std::pair<int, double>>& terms, int gate, double cost) {
    double u = 0.0;
    for (const auto& [c, v] : terms)
        u += v;
    const int w = mip_.col(0.0, u, cost, false);
    std::vector<std::pair<int, double>> row{{w, 1.0}, {gate, -u}};
    for (const auto& [c, v] : terms)
        row.push_back({c, -v});
    mip_.row(row, -u, kInf);
    return w;
}

void CosaModel::buildRanks(int l) {
    const int D = p_.numDims();
    const int T = p_.numTensors();
    RankBlock& rb = ranks_[static_cast<std::size_t>(l)];
    std::vector<double> fixedLog; // log2 of a fixed temporal factor here
    for (int d = 0; d < D; ++d) {
        const std::int64_t f = space_.constraints().levels[static_cast<std::size_t>(l)].temporal[d];
        std::vector<std::pair<int, double>> terms;
        addDimTerms(terms, d, l, l, 1u);
        if (!terms.empty() || f > 1) {
            rb.dims.push_back(d);
            fixedLog.push_back(f > 1 ? std::log2(double(f)) : 0.0);
        }
    }
    const std::size_t k = rb.dims.size();
    if (k == 0)
        return;
    rb.o.assign(k, std::vector<int>(k));
    for (std::size_t i = 0; i < k; ++i)
        for (std::size_t z = 0; z < k; ++z)
            rb.o[i][z] = mip_.col(0.0, 1.0, 0.0, true);
    // An order constraint places some dimensions outermost or innermost: among
    // the dimensions ranked here, those take the outermost and innermost ranks.
    {
        const OrderConstraint& oc = space_.constraints().levels[static_cast<std::size_t>(l)].order;
        auto fixRank = [&](int d, std::size_t z) {
            const auto it = std::find(rb.dims.begin(), rb.dims.end(), d);
            mip_.row({{rb.o[static_cast<std::size_t>(it - rb.dims.begin())][z], 1.0}}, 1.0, 1.0);
        };
        auto present = [&](int d) {
            return std::find(rb.dims.begin(), rb.dims.end(), d) != rb.dims.end();
        };
        std::size_t top = k;
        for (int i = 0; i < oc.numOuter; ++i)
            if (present(oc.outer[i]))
                fixRank(oc.outer[i], --top);
        std::size_t bottom = 0;
        for (int i = oc.numInner - 1; i >= 0; --i)
            if (present(oc.inner[i]))
                fixRank(oc.inner[i], bottom++);
    }
    for (std::size_t i = 0; i < k; ++i) {
        std::vector<std::pair<int, double>> a, b;
        for (std::size_t z = 0; z < k; ++z) {
            a.push_back({rb.o[i][z], 1.0});
            b.push_back({rb.o[z][i], 1.0});
        }
        mip_.row(a, 1.0, 1.0);
        mip_.row(b, 1.0, 1.0);
    }
    // h[i]: dims[i] has a loop here.
    std::vector<int>& h = rb.h;
    h.assign(k, -1);
    for (std::size_t i = 0; i < k; ++i) {
        h[i] = mip_.col(fixedLog[i] > 0 ? 1.0 : 0.0, 1.0, 0.0, false);
        std::vector<std::pair<int, double>> terms;
        addDimTerms(terms, rb.dims[i], l, l, 1u);
        for (const auto& [c, v] : terms) {
            (void)v;
            mip_.row({{h[i], 1.0}, {c, -1.0}}, 0.0, kInf);
        }
    }
    for (int t = 0; t < T && wTraf_ > 0; ++t) {
        // y[z]: some loop relevant to t sits at rank z or inside it.
        std::vector<int> y(k);
        for (std::size_t z = 0; z < k; ++z) {
            y[z] = mip_.col(0.0, 1.0, 0.0, false);
            if (z > 0)
                mip_.row({{y[z], 1.0}, {y[z - 1], -1.0}}, 0.0, kInf);
            for (std::size_t i = 0; i < k; ++i)
                if (depends(t, rb.dims[i]))
                    mip_.row({{y[z], 1.0}, {rb.o[i][z], -1.0}, {h[i], -1.0}}, -1.0, kInf);
        }
        for (std::size_t i = 0; i < k; ++i) {
            const int d = rb.dims[i];
            std::vector<std::pair<int, double>> terms;
            addDimTerms(terms, d, l, l, 1u);
            if (depends(t, d)) { // relevant loops always re-send
                for (const auto& [c, v] : terms)
                    mip_.addCost(c, wTraf_ * v);
                continue;
            }
            // r: the irrelevant loop of d sits outside a relevant one.
            const int r = mip_.col(0.0, 1.0, wTraf_ * fixedLog[i], false);
            for (std::size_t z = 0; z < k; ++z)
                mip_.row({{r, 1.0}, {rb.o[i][z], -1.0}, {y[z], -1.0}}, -1.0, kInf);
            if (terms.empty())
                continue;
            // d's loop here counts when it sits outside a relevant one.
            gated(terms, r, wTraf_);
        }
    }
}

} // namespace mw::cosa
