#include "model/cost_model.h"

#include "arch/architecture.h"
#include "mapping/mapping.h"
#include "workload/problem.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

// Semantics (Timeloop v0.4, dense):
//
// * The loop nest runs, from outside in: for each storage level its temporal
//   loops, then its spatial loops (the fan-out to its children). A level's tile of
//   a tensor is the bounding box of the coordinates touched by every loop inside
//   it, so sliding windows give overlapping tiles (P + R - 1 and the like).
// * Fills of a kept tile are the words that are new at each iteration of the
//   temporal loops above the level. Only steps of the innermost of those loops
//   reuse a partially overlapping previous tile (the sliding-window delta); a
//   step of any outer loop that changes the tile refetches it whole, and steps
//   that touch only dimensions the tensor ignores fetch nothing. This is what
//   Timeloop's delta analysis reports, and what its reference outputs show.
// * Read-only tensors: a parent is read once per word its children fill,
//   divided by the multicast factor (spatial factors of dimensions the tensor
//   ignores, between the parent and the child). The innermost keeper is read
//   once per MAC, again divided by the multicast to MACs.
// * Read-write tensors: children send every tile they drain up as updates
//   (spatially reduced over dimensions the tensor ignores). The first update of
//   each word needs no read, so reads = updates - first touches, and a child's
//   fills are its drained tiles minus its first touches.
// * Energy: per tensor and action, scalar accesses rounded up to whole vector
//   accesses of blockSize words, times the vector energy, over all utilized instances, plus leakage per instance and
//   cycle. Cycles: temporal iterations, stretched where a level's bandwidth
//   cannot keep up.

namespace mw {

namespace {

using i64 = std::int64_t;

struct TemporalLoop {
    int dim;
    int level;
    i64 factor;
    i64 stride; // coordinate step of one iteration: product of the factors inside
};

// Words that are new when a tile of extents `ext` shifts by `shift` along dim.
i64 slidingDelta(const DataSpace& ds, const i64* rankExtent, i64 tile, int dim, i64 shift) {
    i64 overlap = 1;
    for (int r = 0; r < ds.numRanks; ++r) {
        const Rank& rank = ds.ranks[r];
        i64 move = 0;
        for (int i = 0; i < rank.numTerms; ++i)
            if (rank.terms[i].dim == dim)
                move += std::abs(rank.terms[i].coef) * shift;
        const i64 keep = rankExtent[r] - move;
        if (keep <= 0)
            return tile;
        overlap *= keep;
    }
    return tile - overlap;
}

bool checkStructure(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& out) {
    const int L = a.numLevels();
    const int D = p.numDims();
    if (m.numLevels != L) {
        Violation v;
        v.kind = ViolationKind::LevelCount;
        v.needed = L;
        v.available = m.numLevels;
        out.addViolation(v);
        return false;
    }
    for (int l = 0; l < L; ++l) {
        const LevelMapping& lm = m.levels[l];
        std::uint32_t seen = 0, seenSpatial = 0;
        for (int i = 0; i < D; ++i) {
            if (lm.order[i] < D)
                seen |= 1u << lm.order[i];
            if (lm.spatialOrder[i] < D)
                seenSpatial |= 1u << lm.spatialOrder[i];
        }
        const std::uint32_t all = (D >= 32) ? ~0u : ((1u << D) - 1);
        if (seen != all || seenSpatial != all) {
            Violation v;
            v.kind = ViolationKind::BadPermutation;
            v.level = static_cast<std::int8_t>(l);
            out.addViolation(v);
        }
        i64 fx = 1, fy = 1;
        for (int d = 0; d < D; ++d) {
            if (lm.temporal[d] == 0 || lm.spatialX[d] == 0 || lm.spatialY[d] == 0) {
                Violation v;
                v.kind = ViolationKind::ZeroFactor;
                v.level = static_cast<std::int8_t>(l);
                v.dim = static_cast<std::int8_t>(d);
                out.addViolation(v);
            }
            fx *= lm.spatialX[d];
            fy *= lm.spatialY[d];
        }
        if (fx > a.fanoutX(l)) {
            Violation v;
            v.kind = ViolationKind::FanoutX;
            v.level = static_cast<std::int8_t>(l);
            v.needed = fx;
            v.available = a.fanoutX(l);
            out.addViolation(v);
        }
        if (fy > a.fanoutY(l)) {
            Violation v;
            v.kind = ViolationKind::FanoutY;
            v.level = static_cast<std::int8_t>(l);
            v.needed = fy;
            v.available = a.fanoutY(l);
            out.addViolation(v);
        }
    }
    for (int d = 0; d < D; ++d) {
        i64 prod = 1;
        for (int l = 0; l < L; ++l)
            prod *= i64(m.levels[l].temporal[d]) * m.levels[l].spatialX[d] *
                    m.levels[l].spatialY[d];
        if (prod != p.dims[d].bound) {
            Violation v;
            v.kind = ViolationKind::FactorProduct;
            v.dim = static_cast<std::int8_t>(d);
            v.needed = p.dims[d].bound;
            v.available = prod;
            out.addViolation(v);
        }
    }
    for (int t = 0; t < p.numTensors(); ++t)
        if (!m.levels[0].keeps(t)) {
            Violation v;
            v.kind = ViolationKind::OutermostMustKeep;
            v.level = 0;
            v.tensor = static_cast<std::int8_t>(t);
            out.addViolation(v);
        }
    return out.numViolations == 0;
}

} // namespace

void Evaluation::addViolation(const Violation& v) {
    valid = false;
    if (numViolations < kMaxViolations)
        violations[numViolations++] = v;
    else
        violationsTruncated = true;
}

double objectiveValue(const Evaluation& e, Objective o) {
    switch (o) {
    case Objective::EDP:
        return e.edp;
    case Objective::Energy:
        return e.energy;
    case Objective::Cycles:
        return static_cast<double>(e.cycles);
    }
    return e.edp;
}

void evaluate(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& out) {
    out.valid = true;
    out.numViolations = 0;
    out.violationsTruncated = false;
    out.numLevels = a.numLevels();
    out.numTensors = p.numTensors();
    out.computes = p.computes();
    out.cycles = out.computeCycles = 0;
    out.energy = out.computeEnergy = out.edp = out.utilization = 0.0;
    out.utilizedMacs = 0;
    for (int l = 0; l < kMaxLevels; ++l)
        out.levels[l] = LevelStats{};

    if (!checkStructure(p, a, m, out))
        return;

    const int L = a.numLevels();
    const int D = p.numDims();
    const int T = p.numTensors();

    // ext[l][d]: coordinates of d covered inside level l (its loops and all inner ones).
    // spAbove[l][d]: spatial factors of d above level l (instances level l is split into).
    i64 ext[kMaxLevels + 1][kMaxDims];
    i64 spAbove[kMaxLevels + 1][kMaxDims];
    for (int d = 0; d < D; ++d) {
        ext[L][d] = 1;
        spAbove[0][d] = 1;
    }
    for (int l = L - 1; l >= 0; --l)
        for (int d = 0; d < D; ++d)
            ext[l][d] = ext[l + 1][d] * m.levels[l].temporal[d] * m.levels[l].spatialX[d] *
                        m.levels[l].spatialY[d];
    for (int l = 0; l < L; ++l)
        for (int d = 0; d < D; ++d)
            spAbove[l + 1][d] =
                spAbove[l][d] * m.levels[l].spatialX[d] * m.levels[l].spatialY[d];

    // Non-unit temporal loops, innermost first; loops above level k are the
    // suffix starting at firstAbove[k].
    TemporalLoop loops[kMaxLevels * kMaxDims];
    i64 outerProduct[kMaxLevels * kMaxDims]; // product of the factors of loops outside loop i
    int firstAbove[kMaxLevels + 1];
    int numLoops = 0;
    i64 computeCycles = 1;
    for (int l = L - 1; l >= 0; --l) {
        firstAbove[l + 1] = numLoops;
        const LevelMapping& lm = m.levels[l];
        for (int i = D - 1; i >= 0; --i) {
            const int d = lm.order[i];
            const i64 f = lm.temporal[d];
            if (f <= 1)
                continue;
            loops[numLoops++] = {d, l, f, ext[l + 1][d] * lm.spatialX[d] * lm.spatialY[d]};
            computeCycles *= f;
        }
    }
    firstAbove[0] = numLoops;
    {
        i64 prod = 1;
        for (int i = numLoops - 1; i >= 0; --i) {
            outerProduct[i] = prod;
            prod *= loops[i].factor;
        }
    }

    i64 macsUsed = 1;
    for (int d = 0; d < D; ++d)
        macsUsed *= spAbove[L][d];
    out.utilizedMacs = macsUsed;
    out.computeCycles = computeCycles;

    // Tiles, first touches and drained/filled words per level and tensor.
    i64 transfers[kMaxLevels][kMaxTensors]; // words entering the tile over the run
    for (int l = 0; l < L; ++l) {
        LevelStats& ls = out.levels[l];
        i64 inst = 1;
        for (int d = 0; d < D; ++d)
            inst *= spAbove[l][d];
        ls.utilizedInstances = inst;
        for (int t = 0; t < T; ++t) {
            TensorLevelStats& ts = ls.tensors[t];
            ts.kept = m.levels[l].keeps(t);
            if (!ts.kept)
                continue;
            const DataSpace& ds = p.tensors[t];
            i64 rankExtent[kMaxRanks];
            i64 tile = 1, first = 1;
            for (int r = 0; r < ds.numRanks; ++r) {
                const Rank& rank = ds.ranks[r];
                i64 e = 1, span = 1;
                for (int i = 0; i < rank.numTerms; ++i) {
                    const int d = rank.terms[i].dim;
                    const i64 c = std::abs(rank.terms[i].coef);
                    e += c * (ext[l][d] - 1);
                    span += c * (p.dims[d].bound / spAbove[l][d] - 1);
                }
                // One-term coordinates touch exactly bound/spatial distinct values.
                if (rank.numTerms == 1)
                    span = p.dims[rank.terms[0].dim].bound / spAbove[l][rank.terms[0].dim];
                rankExtent[r] = e;
                tile *= e;
                first *= span;
            }
            ts.tile = tile;
            ts.firstTouches = first;
            ls.capacityUsed += tile;

            i64 moved = tile;
            const int i0 = firstAbove[l];
            if (i0 < numLoops) {
                const TemporalLoop& in = loops[i0];
                const bool inRelevant = (ds.dimMask >> in.dim) & 1u;
                if (inRelevant)
                    moved += (in.factor - 1) * outerProduct[i0] *
                             slidingDelta(ds, rankExtent, tile, in.dim, in.stride);
                bool changed = inRelevant;
                for (int i = i0 + 1; i < numLoops; ++i) {
                    changed = changed || ((ds.dimMask >> loops[i].dim) & 1u);
                    if (changed)
                        moved += (loops[i].factor - 1) * outerProduct[i] * tile;
                }
            }
            transfers[l][t] = moved;
        }
        if (l > 0 && !a.levels[l].unbounded()) {
            const i64 available =
                static_cast<i64>(double(a.levels[l].capacityWords) / a.levels[l].multipleBuffering);
            if (ls.capacityUsed > available) {
                bool single = false;
                for (int t = 0; t < T; ++t) {
                    if (!ls.tensors[t].kept || ls.tensors[t].tile <= available)
                        continue;
                    single = true;
                    Violation v;
                    v.kind = ViolationKind::Capacity;
                    v.level = static_cast<std::int8_t>(l);
                    v.tensor = static_cast<std::int8_t>(t);
                    v.needed = ls.tensors[t].tile;
                    v.available = available;
                    out.addViolation(v);
                }
                if (!single) { // only the tiles together overflow
                    Violation v;
                    v.kind = ViolationKind::Capacity;
                    v.level = static_cast<std::int8_t>(l);
                    v.needed = ls.capacityUsed;
                    v.available = available;
                    out.addViolation(v);
                }
            }
        }
    }

    // Walk each tensor's chain of keepers from the outermost level inwards.
    for (int t = 0; t < T; ++t) {
        const DataSpace& ds = p.tensors[t];
        int parent = 0;
        for (;;) {
            int child = parent + 1;
            while (child < L && !m.levels[child].keeps(t))
                ++child;
            // Children per parent instance and those sharing the same words.
            i64 ratio = 1, shared = 1;
            for (int d = 0; d < D; ++d) {
                const i64 s = spAbove[child][d] / spAbove[parent][d];
                ratio *= s;
                if (!((ds.dimMask >> d) & 1u))
                    shared *= s;
            }
            TensorLevelStats& ps = out.levels[parent].tensors[t];
            if (child == L) {
                // The compute level: one operand access per MAC, over the whole run.
                i64 under = 1;
                for (int d = 0; d < D; ++d)
                    under *= p.dims[d].bound / spAbove[parent][d];
                const i64 accesses = under / shared;
                if (ds.readWrite) {
                    ps.updates = accesses;
                    ps.reads = accesses - ps.firstTouches;
                } else {
                    ps.reads = accesses;
                }
                break;
            }
            TensorLevelStats& cs = out.levels[child].tensors[t];
            const i64 moved = transfers[child][t];
            if (ds.readWrite) {
                cs.fills = moved - cs.firstTouches;
                ps.updates = moved * ratio / shared;
                ps.reads = ps.updates - ps.firstTouches;
            } else {
                cs.fills = moved;
                ps.reads = moved * ratio / shared;
            }
            parent = child;
        }
    }

    // Cycles: compute, stretched by any level whose bandwidth cannot keep up.
    i64 cycles = computeCycles;
    for (int l = 0; l < L; ++l) {
        const StorageLevel& s = a.levels[l];
        LevelStats& ls = out.levels[l];
        i64 reads = 0, writes = 0;
        for (int t = 0; t < T; ++t) {
            reads += ls.tensors[t].reads;
            writes += ls.tensors[t].fills + ls.tensors[t].updates;
        }
        i64 need = computeCycles;
        if (s.readBandwidth > 0)
            need = std::max(need, static_cast<i64>(std::ceil(double(reads) / s.readBandwidth)));
        if (s.writeBandwidth > 0)
            need = std::max(need, static_cast<i64>(std::ceil(double(writes) / s.writeBandwidth)));
        ls.cycles = need;
        cycles = std::max(cycles, need);
    }
    out.cycles = cycles;

    // Energy.
    double total = 0.0;
    for (int l = 0; l < L; ++l) {
        const StorageLevel& s = a.levels[l];
        LevelStats& ls = out.levels[l];
        // Whole vector accesses: a partly used block costs a full one.
        const i64 bs = s.blockSize;
        auto vectors = [bs](i64 words) { return double((words + bs - 1) / bs); };
        double access = 0.0;
        for (int t = 0; t < T; ++t) {
            TensorLevelStats& ts = ls.tensors[t];
            if (!ts.kept)
                continue;
            ts.energy = (vectors(ts.reads) * s.energy.read + vectors(ts.fills) * s.energy.write +
                         vectors(ts.updates) * s.energy.update) *
                        double(ls.utilizedInstances);
            access += ts.energy;
        }
        ls.accessEnergy = access;
        ls.leakEnergy = s.energy.leak * double(cycles) * double(s.instances());
        ls.energy = access + ls.leakEnergy;
        total += ls.energy;
    }
    out.computeEnergy = double(out.computes) * a.compute.macEnergy;
    total += out.computeEnergy;
    out.energy = total;
    out.utilization = double(out.computes) / (double(cycles) * double(a.compute.instances()));
    out.edp = total * 1e-12 * double(cycles);
}

Evaluation evaluate(const Problem& p, const Architecture& a, const Mapping& m) {
    Evaluation e;
    evaluate(p, a, m, e);
    return e;
}

} // namespace mw
