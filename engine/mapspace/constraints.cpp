#include "mapspace/constraints.h"

#include "mapspace/mapspace.h"
#include "model/evaluation.h"

#include <algorithm>
#include <string>

namespace mw {

bool OrderConstraint::isFree(int d) const {
    for (int i = 0; i < numOuter; ++i)
        if (outer[i] == d)
            return false;
    for (int i = 0; i < numInner; ++i)
        if (inner[i] == d)
            return false;
    return true;
}

void OrderConstraint::apply(std::array<std::uint8_t, kMaxDims>& order, int numDims) const {
    if (!constrains())
        return;
    std::array<std::uint8_t, kMaxDims> out = order;
    int k = 0;
    for (int i = 0; i < numOuter; ++i)
        out[k++] = outer[i];
    for (int i = 0; i < numDims; ++i)
        if (isFree(order[i]))
            out[k++] = order[i];
    for (int i = 0; i < numInner; ++i)
        out[k++] = inner[i];
    order = out;
}

bool OrderConstraint::holds(const std::array<std::uint8_t, kMaxDims>& order, std::uint32_t real,
                            int numDims) const {
    if (!constrains())
        return true;
    std::array<std::uint8_t, kMaxDims> projected = order;
    apply(projected, numDims);
    // The real loops must meet in the same order in both.
    int i = 0, j = 0;
    for (;;) {
        while (i < numDims && !((real >> order[i]) & 1u))
            ++i;
        while (j < numDims && !((real >> projected[j]) & 1u))
            ++j;
        if (i == numDims || j == numDims)
            return i == numDims && j == numDims;
        if (order[i] != projected[j])
            return false;
        ++i;
        ++j;
    }
}

EmptySpace whyNoLegalMapping(const MapSpace& space, int draws) {
    const Problem& p = space.problem();
    const Architecture& a = space.arch();
    const MapSpaceConstraints& c = space.constraints();
    const int L = a.numLevels(), D = p.numDims();
    // Fixed spatial factors against each fan-out.
    for (int l = 0; l < L; ++l) {
        std::int64_t x = 1, y = 1;
        for (int d = 0; d < D; ++d) {
            x *= std::max<std::int64_t>(1, c.levels[l].spatialX[d]);
            y *= std::max<std::int64_t>(1, c.levels[l].spatialY[d]);
        }
        if (x > a.fanoutX(l) || y > a.fanoutY(l))
            return {"the fixed spatial factors at '" + a.levels[l].name + "' need " +
                        std::to_string(x) + " x " + std::to_string(y) +
                        " children; it fans out to " + std::to_string(a.fanoutX(l)) + " x " +
                        std::to_string(a.fanoutY(l)),
                    true};
    }
    // The smallest tiles: a dimension's free factors go above a level when
    // some slot above it may take them, else they stay inside it.
    std::vector<std::int64_t> freeBound(static_cast<std::size_t>(D));
    for (int d = 0; d < D; ++d) {
        std::int64_t fixed = 1;
        for (int l = 0; l < L; ++l)
            fixed *= std::max<std::int64_t>(1, c.levels[l].temporal[d]) *
                     std::max<std::int64_t>(1, c.levels[l].spatialX[d]) *
                     std::max<std::int64_t>(1, c.levels[l].spatialY[d]);
        freeBound[static_cast<std::size_t>(d)] = p.dims[d].bound / fixed;
    }
    for (int l = 1; l < L; ++l) {
        const LevelConstraint& lc = c.levels[l];
        const std::uint8_t mustKeep = lc.keepFixed & lc.keepValue;
        if (mustKeep == 0 || !space.levelHasTemporal(l))
            continue;
        std::int64_t ext[kMaxDims];
        for (int d = 0; d < D; ++d) {
            ext[d] = 1;
            for (int k = l; k < L; ++k)
                ext[d] *= std::max<std::int64_t>(1, c.levels[k].temporal[d]) *
                          std::max<std::int64_t>(1, c.levels[k].spatialX[d]) *
                          std::max<std::int64_t>(1, c.levels[k].spatialY[d]);
            bool above = false;
            for (const MapSpace::Slot& s : space.factorSlots(d))
                above = above || s.level < l;
            if (!above)
                ext[d] *= freeBound[static_cast<std::size_t>(d)];
        }
        if (space.overflows(l, ext, mustKeep)) {
            std::string tensors;
            for (int t = 0; t < p.numTensors(); ++t)
                if ((mustKeep >> t) & 1u)
                    tensors += (tensors.empty() ? "" : ", ") + p.tensors[t].name;
            return {"'" + a.levels[l].name + "' must keep " + tensors +
                        ", whose smallest tiles under the fixed factors take " +
                        std::to_string(space.tileWords(ext, mustKeep)) + " words; it holds " +
                        std::to_string(a.levels[l].capacityWords),
                    true};
        }
    }
    Rng rng(1);
    Evaluation scratch;
    for (int i = 0; i < draws; ++i) {
        Mapping m = space.sample(rng);
        if (space.repair(m, rng, scratch) && space.isLegal(m, scratch))
            return {};
    }
    return {"no legal mapping among " + std::to_string(draws) +
                " sampled and repaired mappings (buffers too small for the fixed factors, or the "
                "minimum utilization out of reach)",
            false};
}

} // namespace mw
