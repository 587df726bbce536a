#include "mapspace/encoding.h"

#include "common/error.h"
#include "model/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace mw {

MappingEncoding::MappingEncoding(const MapSpace& space) : space_(&space) {
    const Problem& p = space.problem();
    const Architecture& a = space.arch();
    const int D = p.numDims(), L = a.numLevels();
    for (int d = 0; d < D; ++d) {
        if (space.factorSlots(d).size() < 2)
            continue; // one place to go: nothing to choose
        for (std::uint32_t prime : space.freePrimes(d)) {
            elements_.push_back({Kind::Prime, 0, std::int8_t(d), 0, prime});
            bounds_.push_back(std::int64_t(space.factorSlots(d).size()));
        }
    }
    const auto& levels = space.constraints().levels;
    auto constraintOf = [&](int l) -> const LevelConstraint* {
        return l < int(levels.size()) ? &levels[std::size_t(l)] : nullptr;
    };
    for (int l = 0; l < L; ++l) {
        const LevelConstraint* lc = constraintOf(l);
        if (!space.levelHasTemporal(l) || (lc && lc->order.fixes(D)))
            continue;
        orderGroups_.push_back({std::int8_t(l), 0, std::uint32_t(elements_.size())});
        for (int d = 0; d < D; ++d) {
            elements_.push_back({Kind::Order, std::int8_t(l), std::int8_t(d), 0, 0});
            bounds_.push_back(D);
        }
    }
    for (int l = 0; l < L; ++l) {
        const LevelConstraint* lc = constraintOf(l);
        if ((a.fanoutX(l) <= 1 && a.fanoutY(l) <= 1) || (lc && lc->spatialOrder.fixes(D)))
            continue;
        orderGroups_.push_back({std::int8_t(l), 1, std::uint32_t(elements_.size())});
        for (int d = 0; d < D; ++d) {
            elements_.push_back({Kind::SpatialOrder, std::int8_t(l), std::int8_t(d), 0, 0});
            bounds_.push_back(D);
        }
    }
    for (int l = 1; l < L; ++l) {
        if (a.levels[std::size_t(l)].cls == LevelClass::Dummy)
            continue;
        const LevelConstraint* lc = constraintOf(l);
        for (int t = 0; t < p.numTensors(); ++t)
            if (!lc || !((lc->keepFixed >> t) & 1u)) {
                elements_.push_back({Kind::Keep, std::int8_t(l), 0, std::int8_t(t), 0});
                bounds_.push_back(2);
            }
    }
    // Fixed factors, orders and keep choices; every free factor 1; every
    // level keeps every tensor (dummy levels none).
    base_ = makeTrivialMapping(p, a);
    space.applyFixed(base_);
    // A dimension with one slot takes its free factors there.
    for (int d = 0; d < D; ++d) {
        const auto& slots = space.factorSlots(d);
        if (slots.size() == 1)
            for (std::uint32_t prime : space.freePrimes(d))
                MapSpace::factorAt(base_, d, slots[0]) *= prime;
    }
}

std::string MappingEncoding::slotName(int dim, int slot) const {
    const MapSpace::Slot s = space_->factorSlots(dim)[std::size_t(slot)];
    return space_->arch().levels[std::size_t(s.level)].name + (s.kind == 0   ? " temporal"
                                                               : s.kind == 1 ? " X"
                                                                             : " Y");
}

std::vector<std::string> MappingEncoding::names() const {
    const Problem& p = space_->problem();
    const Architecture& a = space_->arch();
    std::vector<std::string> out;
    std::vector<int> nth(std::size_t(p.numDims()), 0);
    for (const Element& e : elements_) {
        switch (e.kind) {
        case Kind::Prime:
            out.push_back(p.dims[std::size_t(e.dim)].name + ":" + std::to_string(e.prime) + "#" +
                          std::to_string(++nth[std::size_t(e.dim)]) + " slot");
            break;
        case Kind::Order:
            out.push_back(a.levels[std::size_t(e.level)].name + " order " +
                          p.dims[std::size_t(e.dim)].name);
            break;
        case Kind::SpatialOrder:
            out.push_back(a.levels[std::size_t(e.level)].name + " spatial order " +
                          p.dims[std::size_t(e.dim)].name);
            break;
        case Kind::Keep:
            out.push_back(a.levels[std::size_t(e.level)].name + " keep " +
                          p.tensors[std::size_t(e.tensor)].name);
            break;
        }
    }
    return out;
}

void MappingEncoding::encode(const Mapping& m, std::int64_t* out) const {
    const Problem& p = space_->problem();
    const int D = p.numDims();
    // What is left of each slot's factor, over what every mapping of the space
    // has there (base_), as primes are given their slots.
    std::int64_t rest[kMaxDims][3 * kMaxLevels];
    for (int d = 0; d < D; ++d) {
        const auto& slots = space_->factorSlots(d);
        for (std::size_t s = 0; s < slots.size(); ++s) {
            const std::uint32_t fixed = MapSpace::factorAt(base_, d, slots[s]);
            const std::uint32_t has = MapSpace::factorAt(m, d, slots[s]);
            if (has % fixed != 0)
                throw InputError("mapping", "its factor of " + p.dims[std::size_t(d)].name +
                                                " at " + slotName(d, int(s)) + " is " +
                                                std::to_string(has) + "; expected a multiple of " +
                                                std::to_string(fixed) +
                                                " (the constraints' factor there)");
            rest[d][s] = has / fixed;
        }
    }
    for (std::size_t i = 0; i < elements_.size(); ++i) {
        const Element& e = elements_[i];
        switch (e.kind) {
        case Kind::Prime: {
            const auto& slots = space_->factorSlots(e.dim);
            std::size_t s = 0;
            while (s < slots.size() && rest[e.dim][s] % e.prime != 0)
                ++s;
            if (s == slots.size())
                throw InputError("mapping", "its factors of " + p.dims[std::size_t(e.dim)].name +
                                                " are not a split of the dimension's free "
                                                "factors; expected a mapping of this map space");
            rest[e.dim][s] /= e.prime;
            out[i] = std::int64_t(s);
            break;
        }
        case Kind::Order:
        case Kind::SpatialOrder: {
            const auto& order =
                e.kind == Kind::Order ? m.levels[e.level].order : m.levels[e.level].spatialOrder;
            const auto* at = std::find(order.begin(), order.begin() + D, std::uint8_t(e.dim));
            out[i] = at - order.begin();
            break;
        }
        case Kind::Keep:
            out[i] = m.levels[e.level].keeps(e.tensor) ? 1 : 0;
            break;
        }
    }
    for (int d = 0; d < D; ++d) {
        const auto& slots = space_->factorSlots(d);
        for (std::size_t s = 0; s < slots.size(); ++s)
            if (rest[d][s] != 1)
                throw InputError("mapping", "its factors of " + p.dims[std::size_t(d)].name +
                                                " multiply to more than the dimension's free "
                                                "factors; expected a mapping of this map space");
    }
}

std::vector<std::int64_t> MappingEncoding::encode(const Mapping& m) const {
    std::vector<std::int64_t> v(elements_.size());
    encode(m, v.data());
    return v;
}

bool MappingEncoding::decode(const std::int64_t* in, Mapping& out) const {
    for (std::size_t i = 0; i < elements_.size(); ++i)
        if (in[i] < 0 || in[i] >= bounds_[i])
            return false;
    const int D = space_->problem().numDims();
    Mapping& m = out;
    copyLevelsInUse(m, base_);
    for (std::size_t i = 0; i < elements_.size(); ++i) {
        const Element& e = elements_[i];
        if (e.kind == Kind::Prime)
            MapSpace::factorAt(m, e.dim, space_->factorSlots(e.dim)[std::size_t(in[i])]) *= e.prime;
        else if (e.kind == Kind::Keep)
            m.levels[std::size_t(e.level)].setKeep(e.tensor, in[i] != 0);
    }
    // Orders: the dimensions sorted by their ranks.
    const auto& levels = space_->constraints().levels;
    for (const OrderGroup& g : orderGroups_) {
        auto& lm = m.levels[std::size_t(g.level)];
        auto& order = g.kind == 0 ? lm.order : lm.spatialOrder;
        const std::int64_t* rank = in + g.first;
        // Ranks lie in [0, D) (checked above): a counting sort, stable (equal
        // ranks keep dimension order), without the mispredicted branches of
        // a comparison sort on random ranks.
        std::uint8_t start[kMaxDims + 1] = {};
        for (int d = 0; d < D; ++d)
            ++start[rank[d] + 1];
        for (int r = 0; r < D; ++r)
            start[r + 1] = std::uint8_t(start[r + 1] + start[r]);
        for (int d = 0; d < D; ++d)
            order[start[rank[d]]++] = std::uint8_t(d);
        if (g.level < int(levels.size())) { // a partial order's places
            const auto& lc = levels[std::size_t(g.level)];
            (g.kind == 0 ? lc.order : lc.spatialOrder).apply(order, D);
        }
    }
    return true;
}

void evaluateEncoded(const MappingEncoding& encoding, const std::int64_t* rows, std::size_t n,
                     int threads, const EncodedFigures& out) {
    const std::size_t width = encoding.size();
    const CostModel& model = encoding.space().model();
    auto range = [&](std::size_t begin, std::size_t end) {
        Evaluation e;
        Mapping m;
        constexpr double nan = std::numeric_limits<double>::quiet_NaN();
        for (std::size_t i = begin; i < end; ++i) {
            bool valid = encoding.decode(rows + i * width, m);
            if (valid) {
                model.evaluate(m, e);
                valid = e.valid;
            }
            out.energy[i] = valid ? e.energy : nan;
            out.cycles[i] = valid ? double(e.cycles) : nan;
            out.edp[i] = valid ? e.edp : nan;
            out.valid[i] = valid ? 1 : 0;
        }
    };
    int t = threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
    // Below a few thousand rows a thread costs more than it saves.
    t = int(std::min<std::size_t>(std::size_t(t), std::max<std::size_t>(1, n / 2048)));
    if (t <= 1) {
        range(0, n);
        return;
    }
    std::vector<std::thread> pool;
    const std::size_t chunk = (n + std::size_t(t) - 1) / std::size_t(t);
    for (int k = 0; k < t; ++k) {
        const std::size_t begin = std::min(n, std::size_t(k) * chunk);
        const std::size_t end = std::min(n, begin + chunk);
        pool.emplace_back(range, begin, end);
    }
    for (auto& th : pool)
        th.join();
}

} // namespace mw
