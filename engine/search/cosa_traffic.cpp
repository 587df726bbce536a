// CoSA's traffic and energy at every level (cosa_model.h). The paper counts
// traffic at one level, the global buffer's network (Eqs. 7-11), in log2
// words summed over tensors, and its code adds DRAM's loops. On a hierarchy
// with several buffers per PE, fixed keeps and costly DRAM words that proxy
// misses most of what a schedule costs (under Eyeriss' row-stationary
// constraints it emptied the scratchpads, which only the iterations at the
// global buffer would have paid for), so here the same ingredients (tiles,
// fan-outs, Eq. 9's indicator of loops that re-send a tile) give the words
// moved across every boundary:
//
//   fills(c, t) = tile of t at c x the fan-outs above c x every loop above c
//                 that changes the tile (one t depends on, or one t ignores
//                 with such a loop inside it, at its level or further in)
//
// and each is priced at the pJ per word of the child's writes and the
// parent's reads (the parent: the next level above that keeps t; its reads
// are divided by the fan-outs between them that t ignores, multicast).
// Partial results are counted once, as the updates they make upward. The
// MACs read each operand from its innermost keeper. Each part of the energy
// is a column e >= 2^(log2 part) / E0 by tangents (E0 the energy scale), and
// their sum enters the objective as its tangent at E0, w_comp x E / (E0 ln 2):
// with cyc (log2 cycles) that is log2 EDP to first order around E0. The
// search solves twice, the second time around the first solution's energy.
// Per-instance words over a level's bandwidth bound cyc from below.
#include "search/cosa_model.h"

#include "arch/architecture.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mw::cosa {

std::pair<double, double> range(const CosaModel::Affine& a, const MipProblem& mip) {
    double lo = a.constant, hi = a.constant;
    for (const auto& [c, v] : a.terms) {
        const double l = mip.lower(c), u = mip.upper(c);
        lo += v > 0 ? v * l : v * u;
        hi += v > 0 ? v * u : v * l;
    }
    return {lo, hi};
}

namespace {

void append(CosaModel::Affine& to, const CosaModel::Affine& from, double scale = 1.0) {
    to.constant += scale * from.constant;
    for (const auto& [c, v] : from.terms)
        to.terms.push_back({c, scale * v});
}

} // namespace

int CosaModel::loopIndicator(int k, int d) {
    if (space_.constraints().levels[static_cast<std::size_t>(k)].temporal[d] > 1)
        return kAlways;
    std::vector<std::pair<int, double>> terms;
    addDimTerms(terms, d, k, k, 1u);
    return terms.empty() ? -1 : hasLoop(k, d);
}

CosaModel::Affine CosaModel::keepOf(int l, int t) const {
    Affine k;
    if (l == 0) {
        k.constant = 1.0;
        return k;
    }
    const auto& zs = patternVars_[static_cast<std::size_t>(l)];
    bool all = !zs.empty();
    for (const auto& [c, mask] : zs) {
        if ((mask >> t) & 1u)
            k.terms.push_back({c, 1.0});
        else
            all = false;
    }
    if (all) // every pattern keeps t
        k.terms.clear(), k.constant = 1.0;
    return k;
}

CosaModel::Affine CosaModel::fillsLog(int c, int t) {
    const int L = a_.numLevels();
    const int D = p_.numDims();
    const auto& cons = space_.constraints().levels;
    Affine f;
    // The tile, and the instances: every fan-out above c.
    for (int d = 0; d < D; ++d)
        if (depends(t, d))
            addDimTerms(f.terms, d, c, L - 1, 7u);
    f.constant += fixedTileLog(c, t);
    for (int k = 0; k < c; ++k)
        for (int d = 0; d < D; ++d) {
            addDimTerms(f.terms, d, k, k, 6u);
            for (std::int64_t s : {cons[static_cast<std::size_t>(k)].spatialX[d],
                                   cons[static_cast<std::size_t>(k)].spatialY[d]})
                if (s > 1)
                    f.constant += std::log2(double(s));
        }
    // The loops above c that change its tile, innermost level first; `inner`
    // holds the indicators of relevant loops met so far.
    std::vector<int> inner;
    bool innerAlways = false;
    for (int k = c - 1; k >= 0; --k) {
        if (!space_.levelHasTemporal(k))
            continue;
        const LevelConstraint& lc = cons[static_cast<std::size_t>(k)];
        auto loopTerms = [&](int d) {
            std::vector<std::pair<int, double>> terms;
            addDimTerms(terms, d, k, k, 1u);
            return terms;
        };
        auto fixedLog = [&](int d) {
            return lc.temporal[d] > 1 ? std::log2(double(lc.temporal[d])) : 0.0;
        };
        // An irrelevant loop of d re-sends when `resends` (a 0/1 column) is 1.
        auto addGated = [&](int d, int resends) {
            const auto terms = loopTerms(d);
            if (!terms.empty())
                f.terms.push_back({gated(terms, resends, 0.0), 1.0});
            if (fixedLog(d) > 0)
                f.terms.push_back({resends, fixedLog(d)});
        };
        // A loop that always re-sends: one t depends on, or any with a relevant loop inside.
        auto addAlways = [&](int d) {
            const auto terms = loopTerms(d);
            f.terms.insert(f.terms.end(), terms.begin(), terms.end());
            f.constant += fixedLog(d);
        };
        for (int d = 0; d < D; ++d)
            if (depends(t, d) || innerAlways)
                addAlways(d);
        if (!innerAlways && ranked_[static_cast<std::size_t>(k)]) {
            const RankBlock& rb = ranks_[static_cast<std::size_t>(k)];
            const std::size_t n = rb.dims.size();
            std::vector<int> y(n);
            for (std::size_t z = 0; z < n; ++z) {
                y[z] = mip_.col(0.0, 1.0, 0.0, false);
                if (z > 0)
                    mip_.row({{y[z], 1.0}, {y[z - 1], -1.0}}, 0.0, kInf);
                else
                    for (int w : inner)
                        mip_.row({{y[0], 1.0}, {w, -1.0}}, 0.0, kInf);
                for (std::size_t i = 0; i < n; ++i)
                    if (depends(t, rb.dims[i]))
                        mip_.row({{y[z], 1.0}, {rb.o[i][z], -1.0}, {rb.h[i], -1.0}}, -1.0, kInf);
            }
            for (std::size_t i = 0; i < n; ++i) {
                if (depends(t, rb.dims[i]))
                    continue;
                const int r = mip_.col(0.0, 1.0, 0.0, false);
                for (std::size_t z = 0; z < n; ++z)
                    mip_.row({{r, 1.0}, {rb.o[i][z], -1.0}, {y[z], -1.0}}, -1.0, kInf);
                addGated(rb.dims[i], r);
            }
        } else if (!innerAlways) {
            // The decode's order here: the dimensions' own, as the constraint places them.
            std::array<std::uint8_t, kMaxDims> order{};
            std::iota(order.begin(), order.begin() + D, std::uint8_t(0));
            lc.order.apply(order, D);
            for (int pos = 0; pos < D; ++pos) {
                const int d = order[static_cast<std::size_t>(pos)];
                if (depends(t, d) || (loopTerms(d).empty() && fixedLog(d) <= 0))
                    continue;
                std::vector<int> causes = inner;
                bool always = false;
                for (int q = pos + 1; q < D; ++q) {
                    const int e = order[static_cast<std::size_t>(q)];
                    if (!depends(t, e))
                        continue;
                    const int ind = loopIndicator(k, e);
                    always = always || ind == kAlways;
                    if (ind >= 0)
                        causes.push_back(ind);
                }
                if (always) {
                    addAlways(d);
                    continue;
                }
                if (causes.empty())
                    continue;
                const int y = mip_.col(0.0, 1.0, 0.0, false);
                for (int w : causes)
                    mip_.row({{y, 1.0}, {w, -1.0}}, 0.0, kInf);
                addGated(d, y);
            }
        }
        for (int d = 0; d < D; ++d)
            if (depends(t, d)) {
                const int ind = loopIndicator(k, d);
                innerAlways = innerAlways || ind == kAlways;
                if (ind >= 0)
                    inner.push_back(ind);
            }
    }
    return f;
}

int CosaModel::expPart(const Affine& a, const Affine& gate, double cost) {
    if (gate.terms.empty() && gate.constant > 0.5)
        return -1; // never active
    Affine rel = a;
    rel.constant -= std::log2(energyScale_);
    const auto [lo, hi] = range(rel, mip_);
    constexpr double kFloor = -16.0, kCeil = 12.0;
    if (hi < kFloor)
        return -1;
    // v = a - log2 E0 in a column of its own: the tangents then stay sparse.
    const int v = mip_.col(lo, hi, 0.0, false);
    std::vector<std::pair<int, double>> def{{v, 1.0}};
    for (const auto& [c, k] : rel.terms)
        def.push_back({c, -k});
    mip_.row(def, rel.constant, rel.constant);
    const int e = mip_.col(0.0, kInf, cost, false);
    energyCols_.push_back(e);
    const double first = std::max(std::floor(lo), kFloor);
    const double last = std::min(std::ceil(hi), kCeil);
    for (double p = first; p <= last; p += 1.0) {
        // e >= 2^p (1 + ln2 (v - p)) - s G gate, s = 2^p ln2, G so large
        // that the row says nothing while the gate is >= 1.
        const double s = std::exp2(p) * std::log(2.0);
        const double bigG = std::max(0.0, hi - p) + 1.0 / std::log(2.0);
        std::vector<std::pair<int, double>> row{{e, 1.0}, {v, -s}};
        for (const auto& [c, k] : gate.terms)
            row.push_back({c, s * bigG * k});
        mip_.row(row, -s * p + std::exp2(p) - s * bigG * gate.constant, kInf);
    }
    return e;
}

void CosaModel::bandwidthRow(const Affine& a, const Affine& gate, double bandwidth) {
    if (!(bandwidth > 0) || (gate.terms.empty() && gate.constant > 0.5))
        return;
    const double need = -std::log2(bandwidth);
    const double bigG = std::max(0.0, range(a, mip_).second + need) + 1.0;
    std::vector<std::pair<int, double>> row{{cyc_, 1.0}};
    for (const auto& [c, v] : a.terms)
        row.push_back({c, -v});
    for (const auto& [c, v] : gate.terms)
        row.push_back({c, bigG * v});
    mip_.row(row, a.constant + need - bigG * gate.constant, kInf);
}

void CosaModel::buildTraffic() {
    const int L = a_.numLevels();
    const int D = p_.numDims();
    const int T = p_.numTensors();
    const auto& cons = space_.constraints().levels;
    energyCols_.clear();
    if (!(energyScale_ > 0)) {
        // A first scale: the MACs and every tensor read from DRAM once.
        energyScale_ = double(p_.computes()) * std::max(a_.compute.macEnergy, 1e-3);
        for (int t = 0; t < T; ++t)
            energyScale_ += double(p_.tensorSize(t)) * wordEnergy(0, t);
    }
    const double cost = wComp_ * wEnergy_ / std::log(2.0);
    auto perWord = [&](int l, double pJ) {
        return std::log2(std::max(pJ, 1e-9) /
                         std::max(1, a_.levels[static_cast<std::size_t>(l)].blockSize));
    };
    // log2 of the fan-outs above level l (its instances), and of those
    // between levels p and c that t ignores (multicast).
    auto fanouts = [&](int from, int to, int t, bool onlyIgnored) {
        Affine s;
        for (int k = from; k < to; ++k)
            for (int d = 0; d < D; ++d) {
                if (onlyIgnored && depends(t, d))
                    continue;
                addDimTerms(s.terms, d, k, k, 6u);
                for (std::int64_t v : {cons[static_cast<std::size_t>(k)].spatialX[d],
                                       cons[static_cast<std::size_t>(k)].spatialY[d]})
                    if (v > 1)
                        s.constant += std::log2(double(v));
            }
        return s;
    };
    for (int t = 0; t < T; ++t) {
        const bool partial = p_.tensors[t].readWrite;
        // Words of t (log2, all instances) accessed at level l for pJ each,
        // and per instance within its bandwidth, while the gate is 0.
        auto priceAt = [&](const Affine& words, const Affine& gate, int l, double pJ,
                           double bandwidth) {
            Affine priced = words;
            priced.constant += perWord(l, pJ);
            expPart(priced, gate, cost);
            Affine perInstance = words;
            append(perInstance, fanouts(0, l, t, false), -1.0);
            bandwidthRow(perInstance, gate, bandwidth);
        };
        std::vector<Affine> keep(static_cast<std::size_t>(L));
        for (int l = 0; l < L; ++l)
            keep[static_cast<std::size_t>(l)] = keepOf(l, t);
        for (int c = 1; c < L; ++c) {
            const Affine& kc = keep[static_cast<std::size_t>(c)];
            if (!space_.levelHasTemporal(c) || (kc.terms.empty() && kc.constant < 0.5))
                continue;
            const StorageLevel& child = a_.levels[static_cast<std::size_t>(c)];
            const Affine fills = fillsLog(c, t);
            Affine notKept{1.0 - kc.constant, {}};
            append(notKept, Affine{0.0, kc.terms}, -1.0);
            // The child's side: fills written, or partial results read out.
            priceAt(fills, notKept, c, partial ? child.energy.read : child.energy.write,
                    partial ? child.readBandwidth : child.writeBandwidth);
            // The parent's side, for each level p that may be the next keeper above.
            for (int p = c - 1; p >= 0; --p) {
                const Affine& kp = keep[static_cast<std::size_t>(p)];
                if (kp.terms.empty() && kp.constant < 0.5)
                    continue;
                const StorageLevel& parent = a_.levels[static_cast<std::size_t>(p)];
                // gate = (1 - keep c) + (1 - keep p) + keeps between: 0 iff p is c's parent.
                Affine gate = notKept;
                gate.constant += 1.0;
                append(gate, kp, -1.0);
                bool between = false; // a level between always keeps t
                for (int j = p + 1; j < c; ++j) {
                    const Affine& kj = keep[static_cast<std::size_t>(j)];
                    between = between || (kj.terms.empty() && kj.constant > 0.5);
                    append(gate, kj);
                }
                if (between)
                    break;
                // Multicast divides the parent's reads; spatial reduction
                // (the fan-outs a partial result ignores) its updates.
                Affine words = fills;
                append(words, fanouts(p, c, t, true), -1.0);
                priceAt(words, gate, p, partial ? parent.energy.update : parent.energy.read,
                        partial ? parent.writeBandwidth : parent.readBandwidth);
            }
        }
        // Every MAC reads t from its innermost keeper (and updates partial
        // results there), within that level's bandwidth.
        expPart(operandLog_[static_cast<std::size_t>(t)], Affine{}, cost);
        for (const auto& [l, inner] : innermost_[static_cast<std::size_t>(t)]) {
            const StorageLevel& s = a_.levels[static_cast<std::size_t>(l)];
            Affine perInstance{std::log2(double(p_.computes())), {}};
            append(perInstance, fanouts(0, l, t, false), -1.0);
            const Affine gate{1.0, {{inner, -1.0}}};
            bandwidthRow(perInstance, gate, s.readBandwidth);
            if (partial)
                bandwidthRow(perInstance, gate, s.writeBandwidth);
        }
    }
}

double CosaModel::energyEstimate(const std::vector<double>& sol) const {
    double e = 0.0;
    for (int c : energyCols_)
        e += sol[static_cast<std::size_t>(c)];
    return e * energyScale_;
}

double CosaModel::logEdpEstimate(const std::vector<double>& sol) const {
    const double energy = double(p_.computes()) * a_.compute.macEnergy + energyEstimate(sol);
    return sol[static_cast<std::size_t>(cyc_)] + std::log2(std::max(energy, 1e-9));
}

} // namespace mw::cosa
