// The least cost (energy, or words) of several tensors' parent accesses
// when the children sharing each tensor's words come from one budget of
// spatial factors (see PartialBound's "Sharing, jointly"). Each claim's cost
// is convex in the log of its sharing, so Lagrangian duality gives a bound
// at any multiplier (weak duality); the multiplier is searched only to make
// it tight.
#include "search/optimal_bound.h"

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
