#include "mapping/mapping.h"

#include "arch/architecture.h"
#include "workload/problem.h"

#include <sstream>

namespace mw {

void LevelMapping::setKeep(int t, bool keep) {
    if (keep)
        keepMask = static_cast<std::uint8_t>(keepMask | (1u << t));
    else
        keepMask = static_cast<std::uint8_t>(keepMask & ~(1u << t));
}

Mapping makeTrivialMapping(const Problem& p, const Architecture& a) {
    Mapping m;
    m.numLevels = a.numLevels();
    for (int l = 0; l < m.numLevels; ++l) {
        LevelMapping& lm = m.levels[l];
        lm.temporal.fill(1);
        lm.spatialX.fill(1);
        lm.spatialY.fill(1);
        for (int d = 0; d < kMaxDims; ++d) {
            lm.order[d] = static_cast<std::uint8_t>(d);
            lm.spatialOrder[d] = static_cast<std::uint8_t>(d);
        }
        lm.keepMask = 0;
        if (a.levels[l].cls != LevelClass::Dummy)
            for (int t = 0; t < p.numTensors(); ++t)
                lm.setKeep(t, true);
    }
    return m;
}

std::vector<LoopView> levelLoops(const Problem& p, const Mapping& m, int level) {
    std::vector<LoopView> loops;
    const LevelMapping& lm = m.levels[level];
    for (int i = 0; i < p.numDims(); ++i) {
        const int d = lm.order[i];
        if (d < p.numDims() && lm.temporal[d] > 1)
            loops.push_back({d, lm.temporal[d], LoopView::Temporal});
    }
    for (int i = 0; i < p.numDims(); ++i) {
        const int d = lm.spatialOrder[i];
        if (d >= p.numDims())
            continue;
        if (lm.spatialX[d] > 1)
            loops.push_back({d, lm.spatialX[d], LoopView::SpatialX});
        if (lm.spatialY[d] > 1)
            loops.push_back({d, lm.spatialY[d], LoopView::SpatialY});
    }
    return loops;
}

std::string loopText(const Problem& p, const LoopView& loop) {
    std::string s = "for " + p.dims[loop.dim].name + " in [0:" + std::to_string(loop.factor) + ")";
    if (loop.kind == LoopView::SpatialX)
        s += " (Spatial-X)";
    else if (loop.kind == LoopView::SpatialY)
        s += " (Spatial-Y)";
    return s;
}

std::string renderLoopNest(const Problem& p, const Architecture& a, const Mapping& m,
                           const std::vector<std::vector<std::int64_t>>& tiles) {
    std::ostringstream out;
    int depth = 0;
    bool afterLoops = false;
    for (int l = 0; l < m.numLevels && l < a.numLevels(); ++l) {
        if (afterLoops)
            out << "\n";
        afterLoops = false;
        std::string header = a.levels[l].name + " [ ";
        for (int t = 0; t < p.numTensors(); ++t) {
            if (!m.levels[l].keeps(t))
                continue;
            header += p.tensors[t].name;
            if (l < static_cast<int>(tiles.size()) && t < static_cast<int>(tiles[l].size()))
                header += ":" + std::to_string(tiles[l][t]);
            header += " ";
        }
        header += "]";
        out << header << "\n";
        const auto loops = levelLoops(p, m, l);
        if (loops.empty())
            continue;
        out << std::string(header.size(), '-') << "\n";
        for (const auto& loop : loops) {
            out << "|" << std::string(static_cast<std::size_t>(2 * depth + 1), ' ')
                << loopText(p, loop) << "\n";
            ++depth;
        }
        afterLoops = true;
    }
    out << "|" << std::string(static_cast<std::size_t>(2 * depth + 1), ' ') << "<< Compute >>\n";
    return out.str();
}

} // namespace mw
