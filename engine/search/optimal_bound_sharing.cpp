// The open fan-outs' sharing split among the tensors whose deliveries cross
// them (PartialBound::addJointSharing), and the least cost (energy, or
// words) of their parent accesses under one budget of spatial factors
// (leastJointCost). Each claim's cost is convex in the log of its sharing,
// so Lagrangian duality gives a bound at any multiplier (weak duality); the
// multiplier is searched only to make it tight.
#include "search/optimal_bound.h"

#include "arch/architecture.h"
#include "workload/problem.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mw::optimal_detail {

double SharingClaim::costAt(double parentWords) const {
    const double words = std::max(touched, parentWords);
    return perWord * words + perWordBeyond * std::max(0.0, words - firstTouches);
}

namespace {

// min over y in [0, logCap] of costAt(reach / e^y) + lambda y, and the
// least y attaining it. In u = reach / e^y the function is
// cost(u) - lambda log u (+ lambda log reach): convex, linear pieces of
// cost less a concave log, so its least is at an end of [max(touched,
// reach / cap), reach], at the kink (the first touches), or where a piece's
// slope equals lambda / u. (Below `touched` the cost is flat and y only
// costs.)
struct Least {
    double value, y;
};
Least leastWithPrice(const SharingClaim& c, double lambda) {
    const double hi = c.reach;
    const double lo = std::max(c.touched, c.reach * std::exp(-c.logCap));
    if (hi <= lo)
        return {c.costAt(hi), 0.0};
    Least best{std::numeric_limits<double>::infinity(), 0.0};
    auto consider = [&](double u) {
        if (!(u >= lo && u <= hi))
            return;
        const double y = std::log(hi / u);
        const double v = c.costAt(u) + lambda * y;
        if (v < best.value)
            best = {v, y};
    };
    consider(lo);
    consider(hi);
    if (c.perWordBeyond > 0.0) {
        consider(c.firstTouches);
        if (c.perWord > 0.0)
            consider(std::min(lambda / c.perWord, c.firstTouches));
        consider(std::max(lambda / (c.perWord + c.perWordBeyond), c.firstTouches));
    } else if (c.perWord > 0.0) {
        consider(lambda / c.perWord);
    }
    return best;
}

} // namespace

double leastJointCost(const SharingClaim* claims, int n, double logBudget) {
    // The dual: for a price lambda >= 0 on the budget, the claims' least
    // costs each plus lambda y, less lambda times the budget, lie at or
    // below the cost of every split within the budget. Its slope in lambda
    // is the sum of the least y's less the budget: searched by halving (in
    // log lambda) for the sign change, keeping the best value seen (each is
    // a bound).
    auto dual = [&](double lambda, double& used) {
        double value = -lambda * logBudget;
        used = 0.0;
        for (int i = 0; i < n; ++i) {
            const Least l = leastWithPrice(claims[i], lambda);
            value += l.value;
            used += l.y;
        }
        return value;
    };
    double used = 0.0;
    double best = dual(0.0, used);
    if (used <= logBudget)
        return best; // the budget does not bind
    // Prices at which a claim's marginal cost per unit of log sharing
    // lies: from its least at full sharing to its most at none.
    double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
    for (int i = 0; i < n; ++i) {
        const SharingClaim& c = claims[i];
        const double slope = c.perWord + c.perWordBeyond;
        if (slope <= 0.0 || c.reach <= c.touched)
            continue;
        lo = std::min(lo, c.perWord * std::max(c.touched, c.reach * std::exp(-c.logCap)));
        hi = std::max(hi, slope * c.reach);
    }
    if (!(hi > 0.0) || !std::isfinite(lo))
        return best;
    double logLo = std::log(std::max(lo, hi * 1e-12)) - 1.0, logHi = std::log(hi) + 1.0;
    for (int iteration = 0; iteration < 24; ++iteration) {
        const double mid = 0.5 * (logLo + logHi);
        best = std::max(best, dual(std::exp(mid), used));
        (used > logBudget ? logLo : logHi) = mid;
    }
    return best;
}

} // namespace mw::optimal_detail

namespace mw {

// Each pair took the most sharing the open fan-outs allow it alone, but one
// spatial factor does not share every tensor's words: at a fan-out whose
// factors are s_d, t's sharing is at most the product of s_d over
// sharingDims(t) (X_t). Over the open fan-outs J, the pairs' sharings then
// multiply to at most the product of s_d^(m_d), m_d the number of the pairs'
// tensors with d in X_t: at most J's room times cap(d)^(m_d - 1) over the d
// with m_d > 1, cap(d) the most d can have across J. That is a budget of log
// sharing which the pairs split (leastJointCost), each within its own cap
// and the product of cap(d) over its X_t (X_t keeps the term with the
// largest cap of each coordinate out). The least total energy, and the least
// words each parent reads and takes for its bandwidth, lie at or above what
// the pairs were charged alone; the differences are added.
void PartialBound::addJointSharing(const Mapping& m, const std::int64_t* remaining,
                                   std::uint32_t spatialDecided, std::uint32_t openFanouts,
                                   const double* levelFanoutMax, const Pair* pairs, int n,
                                   double& energy, double* reads, double* writes) const {
    const int L = a_.numLevels(), D = p_.numDims();
    std::array<double, kMaxDims> cap{};
    double room = 1.0;
    for (int j = 0; j < L; ++j)
        if ((openFanouts >> j) & 1u)
            room *= levelFanoutMax[j];
    for (int d = 0; d < D; ++d) {
        double fixed = 1.0;
        bool slot = false;
        for (int j = 0; j < L; ++j)
            if ((openFanouts >> j) & 1u) {
                fixed *= double(m.levels[j].spatialX[d]) * m.levels[j].spatialY[d];
                slot = slot || spatialSlots(j, d, spatialDecided);
            }
        cap[d] = std::min(room, slot ? fixed * double(remaining[d]) : fixed);
    }
    std::array<std::uint32_t, kMaxTensors> shares{}; // X_t of each pair
    std::array<int, kMaxDims> claimsOf{};
    for (int i = 0; i < n; ++i) {
        shares[std::size_t(i)] = sharingDims(pairs[i].t, cap.data());
        for (int d = 0; d < D; ++d)
            claimsOf[std::size_t(d)] += int((shares[std::size_t(i)] >> d) & 1u);
    }
    double logBudget = std::log(room);
    for (int d = 0; d < D; ++d)
        if (claimsOf[std::size_t(d)] > 1)
            logBudget += double(claimsOf[std::size_t(d)] - 1) * std::log(cap[d]);
    // Each pair's claim, and the parent's words at the sharing it took.
    std::array<optimal_detail::SharingClaim, kMaxTensors> claims;
    std::array<double, kMaxTensors> alone{};
    for (int i = 0; i < n; ++i) {
        const Pair& x = pairs[i];
        const double decided = x.decidedSharing, sharing = x.sharing;
        double own = 1.0;
        for (int d = 0; d < D; ++d)
            if ((shares[std::size_t(i)] >> d) & 1u)
                own *= cap[d];
        optimal_detail::SharingClaim& c = claims[std::size_t(i)];
        c.reach = x.delivered / decided;
        c.touched = touched_[x.t];
        c.logCap = std::log(std::min(sharing / decided, own));
        c.firstTouches = x.rw ? x.firstTouchesP : 0.0;
        alone[std::size_t(i)] = x.delivered / sharing;
    }
    // What the least split adds to a sum the pairs were charged alone,
    // each pair's accesses weighed by weigh(pair, claim) (zero: none).
    auto jointExtra = [&](auto&& weigh) {
        std::array<optimal_detail::SharingClaim, kMaxTensors> weighed;
        int numWeighed = 0;
        double charged = 0.0;
        for (int i = 0; i < n; ++i) {
            optimal_detail::SharingClaim c = claims[std::size_t(i)];
            weigh(pairs[i], c);
            if (c.perWord <= 0.0 && c.perWordBeyond <= 0.0)
                continue;
            charged += c.costAt(alone[std::size_t(i)]);
            weighed[std::size_t(numWeighed++)] = c;
        }
        if (numWeighed == 0)
            return 0.0;
        return std::max(0.0, optimal_detail::leastJointCost(weighed.data(), numWeighed, logBudget) -
                                 charged);
    };
    energy += jointExtra([&](const Pair& x, optimal_detail::SharingClaim& c) {
        const auto& e = a_.levels[x.p].energy;
        c.perWord = energyOf(x.p, 1.0, x.rw ? e.update : e.read);
        c.perWordBeyond = x.rw ? energyOf(x.p, 1.0, e.read) : 0.0;
    });
    // And the words each parent level reads and takes, for its bandwidth.
    std::uint32_t parents = 0;
    for (int i = 0; i < n; ++i)
        parents |= 1u << pairs[i].p;
    for (int l = 0; l < L; ++l) {
        if (!((parents >> l) & 1u))
            continue;
        if (a_.levels[l].readBandwidth > 0)
            reads[l] += jointExtra([&](const Pair& x, optimal_detail::SharingClaim& c) {
                c.perWord = x.p == l && !x.rw ? 1.0 : 0.0;
                c.perWordBeyond = x.p == l && x.rw ? 1.0 : 0.0;
            });
        if (a_.levels[l].writeBandwidth > 0)
            writes[l] += jointExtra([&](const Pair& x, optimal_detail::SharingClaim& c) {
                c.perWord = x.p == l && x.rw ? 1.0 : 0.0;
                c.perWordBeyond = 0.0;
            });
    }
}

} // namespace mw
