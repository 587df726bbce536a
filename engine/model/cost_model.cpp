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
//   accesses of blockSize words, times the vector energy, over all utilized instances, plus leakage
//   per utilized instance and cycle. Cycles: temporal iterations, stretched where a level's
//   bandwidth cannot keep up.

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

// Level count, loop orders, zero factors, fan-outs, factor products and the
// outermost level keeping everything, in one pass. Fills the per-level factor
// products the model needs (ext, spatial factors above and below each level).
struct Factors {
    i64 ext[kMaxLevels + 1][kMaxDims];     // coordinates of d covered inside level l
    i64 spBelow[kMaxLevels + 1][kMaxDims]; // spatial factors of d at level l and inside
    i64 temporalAll[kMaxDims];             // temporal factors of d over all levels
    i64 fanout[kMaxLevels];                // spatial factors of level l, all dimensions
};

Violation violation(ViolationKind kind, int level, int tensor, int dim, i64 needed, i64 available) {
    Violation v;
    v.kind = kind;
    v.level = static_cast<std::int8_t>(level);
    v.tensor = static_cast<std::int8_t>(tensor);
    v.dim = static_cast<std::int8_t>(dim);
    v.needed = needed;
    v.available = available;
    return v;
}

bool checkAndFactor(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& out,
                    Factors& f) {
    const int L = a.numLevels();
    const int D = p.numDims();
    if (m.numLevels != L) {
        out.addViolation(violation(ViolationKind::LevelCount, -1, -1, -1, L, m.numLevels));
        return false;
    }
    const std::uint32_t all = (1u << D) - 1;
    for (int d = 0; d < D; ++d) {
        f.ext[L][d] = 1;
        f.spBelow[L][d] = 1;
        f.temporalAll[d] = 1;
    }
    for (int l = L - 1; l >= 0; --l) {
        const LevelMapping& lm = m.levels[l];
        std::uint32_t seen = 0; // temporal order in bits 0-15, spatial order in bits 16-31
        i64 fx = 1, fy = 1;
        for (int i = 0; i < D; ++i) {
            seen |= (1u << lm.order[i]) | (1u << (lm.spatialOrder[i] + 16));
            const i64 t = lm.temporal[i], x = lm.spatialX[i], y = lm.spatialY[i];
            fx *= x;
            fy *= y;
            // Unsigned products: absurd factors wrap (defined) and then fail the
            // product check instead of overflowing.
            using u64 = std::uint64_t;
            f.spBelow[l][i] = static_cast<i64>(u64(f.spBelow[l + 1][i]) * u64(x) * u64(y));
            f.ext[l][i] = static_cast<i64>(u64(f.ext[l + 1][i]) * u64(t) * u64(x) * u64(y));
            f.temporalAll[i] *= t; // a zero factor zeroes the product
            // Timeloop's mapping has one spatial factor per dimension and level;
            // its split sends it to X or Y, never to both.
            if (x > 1 && y > 1)
                out.addViolation(violation(ViolationKind::SplitAxes, l, -1, i, x, y));
        }
        f.fanout[l] = fx * fy;
        if (seen != (all | (all << 16)))
            out.addViolation(violation(ViolationKind::BadPermutation, l, -1, -1, 0, 0));
        if (fx != 0 && fy != 0) { // zero factors are reported with the products below
            // fx > childMesh / ownMesh, without dividing on the hot path.
            const bool inner = l + 1 < L;
            const i64 childX = inner ? a.levels[l + 1].meshX : a.compute.meshX;
            const i64 childY = inner ? a.levels[l + 1].meshY : a.compute.meshY;
            if (fx * a.levels[l].meshX > childX)
                out.addViolation(violation(ViolationKind::FanoutX, l, -1, -1, fx, a.fanoutX(l)));
            if (fy * a.levels[l].meshY > childY)
                out.addViolation(violation(ViolationKind::FanoutY, l, -1, -1, fy, a.fanoutY(l)));
        }
    }
    for (int d = 0; d < D; ++d) {
        if (f.ext[0][d] == p.dims[d].bound)
            continue;
        // A zero factor zeroes the product; name it rather than the product.
        bool zero = false;
        for (int l = 0; l < L; ++l) {
            const LevelMapping& lm = m.levels[l];
            if (lm.temporal[d] == 0 || lm.spatialX[d] == 0 || lm.spatialY[d] == 0) {
                out.addViolation(violation(ViolationKind::ZeroFactor, l, -1, d, 0, 0));
                zero = true;
            }
        }
        if (!zero)
            out.addViolation(
                violation(ViolationKind::FactorProduct, -1, -1, d, p.dims[d].bound, f.ext[0][d]));
    }
    for (int t = 0; t < p.numTensors(); ++t)
        if (!m.levels[0].keeps(t))
            out.addViolation(violation(ViolationKind::OutermostMustKeep, 0, t, -1, 0, 0));
    if (out.numViolations > 0)
        return false;
    return true;
}

} // namespace

void Evaluation::addViolation(const Violation& v) {
    valid = false;
    if (numViolations < kMaxViolations)
        violations[numViolations++] = v;
    else
        violationsTruncated = true;
}

namespace {

void evaluateImpl(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& out,
                  bool legalityOnly) {
    const int L = a.numLevels();
    const int D = p.numDims();
    const int T = p.numTensors();
    out.valid = true;
    out.numViolations = 0;
    out.violationsTruncated = false;
    out.numLevels = L;
    out.numTensors = T;
    out.computes = p.computes();
    out.cycles = out.computeCycles = 0;
    out.energy = out.computeEnergy = out.edp = out.utilization = 0.0;
    out.utilizedMacs = 0;
    // Only what is accumulated needs clearing; the rest is assigned below.
    for (int l = 0; l < L && l < kMaxLevels; ++l) {
        out.levels[l].capacityUsed = 0;
        for (int t = 0; t < T && t < kMaxTensors; ++t)
            out.levels[l].tensors[t] = TensorLevelStats{};
    }

    Factors f;
    if (L > kMaxLevels || D > kMaxDims || T > kMaxTensors) {
        out.addViolation(violation(ViolationKind::LevelCount, -1, -1, -1, kMaxLevels, L));
        return;
    }
    if (!checkAndFactor(p, a, m, out, f))
        return;
    const auto& ext = f.ext;
    // Coordinates of d one instance of level l covers over the whole run.
    auto perInstance = [&f](int l, int d) { return f.temporalAll[d] * f.spBelow[l][d]; };

    // Non-unit temporal loops, innermost first; loops above level k are the
    // suffix starting at firstAbove[k].
    TemporalLoop loops[kMaxLevels * kMaxDims];
    i64 outerProduct[kMaxLevels * kMaxDims + 1]; // product of the factors of loops outside loop i
    int firstAbove[kMaxLevels + 1];
    int numLoops = 0;
    i64 computeCycles = 1;
    for (int l = L - 1; l >= 0 && !legalityOnly; --l) { // legality needs no loops
        firstAbove[l + 1] = numLoops;
        const LevelMapping& lm = m.levels[l];
        for (int i = D - 1; i >= 0; --i) {
            const int d = lm.order[i];
            const i64 factor = lm.temporal[d];
            if (factor <= 1)
                continue;
            loops[numLoops++] = {d, l, factor, ext[l + 1][d] * lm.spatialX[d] * lm.spatialY[d]};
            computeCycles *= factor;
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
    // outerProduct[i - 1] = product of the factors of loops i and outward.
    auto fromLoop = [&](int i) { return i == 0 ? computeCycles : outerProduct[i - 1]; };
    i64 macsUsed = 1;
    for (int l = 0; l < L; ++l)
        macsUsed *= f.fanout[l];
    out.utilizedMacs = macsUsed;
    out.computeCycles = computeCycles;

    // Tiles, first touches and words entering each kept tile over the run.
    i64 transfers[kMaxLevels][kMaxTensors];
    i64 instances = 1; // utilized instances of level l: fan-outs above it
    for (int l = 0; l < L; ++l) {
        LevelStats& ls = out.levels[l];
        ls.utilizedInstances = instances;
        instances *= f.fanout[l];
        const std::uint8_t keepMask = m.levels[l].keepMask;
        for (int t = 0; t < T; ++t) {
            if (!((keepMask >> t) & 1u))
                continue;
            TensorLevelStats& ts = ls.tensors[t];
            ts.kept = true;
            const DataSpace& ds = p.tensors[t];
            i64 rankExtent[kMaxRanks];
            i64 tile = 1, first = 1;
            for (int r = 0; r < ds.numRanks; ++r) {
                const Rank& rank = ds.ranks[r];
                i64 e = 1;
                for (int i = 0; i < rank.numTerms; ++i)
                    e += std::abs(rank.terms[i].coef) * (ext[l][rank.terms[i].dim] - 1);
                rankExtent[r] = e;
                tile *= e;
                if (!ds.readWrite) // first touches only matter for partial results
                    continue;
                if (rank.numTerms == 1) {
                    // One-term coordinates touch exactly as many values as iterations.
                    first *= perInstance(l, rank.terms[0].dim);
                } else {
                    i64 span = 1;
                    for (int i = 0; i < rank.numTerms; ++i)
                        span +=
                            std::abs(rank.terms[i].coef) * (perInstance(l, rank.terms[i].dim) - 1);
                    first *= span;
                }
            }
            // A sparse tensor is stored compressed: its expected nonzeros. (Its
            // traffic is scaled once the dense counts are known, below.)
            const i64 stored =
                ds.density < 1.0
                    ? std::max<i64>(1, static_cast<i64>(std::ceil(double(tile) * ds.density)))
                    : tile;
            ts.tile = stored;
            ts.firstTouches = ds.readWrite ? first : 0;
            ls.capacityUsed += stored;

            i64 moved = tile;
            const int i0 = legalityOnly ? numLoops : firstAbove[l]; // legality needs no fills
            if (i0 < numLoops) {
                const TemporalLoop& in = loops[i0];
                // From the first loop (outside the innermost) at which the tile has
                // changed, every step refetches it: those steps number
                // (product of the factors from there outward) - 1.
                int j = i0 + 1;
                if ((ds.dimMask >> in.dim) & 1u)
                    moved += (in.factor - 1) * outerProduct[i0] *
                             slidingDelta(ds, rankExtent, tile, in.dim, in.stride);
                else
                    while (j < numLoops && !((ds.dimMask >> loops[j].dim) & 1u))
                        ++j;
                if (j < numLoops)
                    moved += (fromLoop(j) - 1) * tile;
            }
            transfers[l][t] = moved;
        }
        const StorageLevel& s = a.levels[l];
        if (l > 0 && !s.unbounded() &&
            double(ls.capacityUsed) * s.multipleBuffering > double(s.capacityWords)) {
            const i64 available = static_cast<i64>(double(s.capacityWords) / s.multipleBuffering);
            bool single = false;
            for (int t = 0; t < T; ++t) {
                if (!ls.tensors[t].kept || ls.tensors[t].tile <= available)
                    continue;
                single = true;
                out.addViolation(
                    violation(ViolationKind::Capacity, l, t, -1, ls.tensors[t].tile, available));
            }
            if (!single) // only the tiles together overflow
                out.addViolation(
                    violation(ViolationKind::Capacity, l, -1, -1, ls.capacityUsed, available));
        }
    }

    if (legalityOnly || !out.valid)
        return;

    // Fan-out of level l over the dimensions tensor t depends on: its children
    // with distinct words of t (the others share them by multicast or reduction).
    i64 distinctFanout[kMaxLevels][kMaxTensors];
    i64 sharedFanout[kMaxLevels][kMaxTensors]; // the rest of the fan-out
    for (int l = 0; l < L; ++l)
        for (int t = 0; t < T; ++t) {
            i64 n = 1, shared = 1;
            if (f.fanout[l] > 1) {
                const std::uint32_t mask = p.tensors[t].dimMask;
                for (int d = 0; d < D; ++d) {
                    const i64 xy = i64(m.levels[l].spatialX[d]) * m.levels[l].spatialY[d];
                    ((mask >> d) & 1u ? n : shared) *= xy;
                }
            }
            distinctFanout[l][t] = n;
            sharedFanout[l][t] = shared;
        }

    // Walk each tensor's chain of keepers from the outermost level inwards.
    for (int t = 0; t < T; ++t) {
        const DataSpace& ds = p.tensors[t];
        int parent = 0;
        for (;;) {
            int child = parent + 1;
            while (child < L && !m.levels[child].keeps(t))
                ++child;
            // Children of one parent instance that hold distinct words of t: the
            // others share them (multicast on the way down, reduction on the way up).
            i64 distinct = 1, shared = 1;
            for (int l = parent; l < child; ++l) {
                distinct *= distinctFanout[l][t];
                shared *= sharedFanout[l][t];
            }
            TensorLevelStats& ps = out.levels[parent].tensors[t];
            ps.sharedBy = shared;
            if (child == L) {
                // The compute level: one operand access per MAC over the run.
                i64 accesses = 1;
                for (int d = 0; d < D; ++d)
                    accesses *= (ds.dimMask >> d) & 1u ? perInstance(parent, d) : f.temporalAll[d];
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
                ps.updates = moved * distinct;
                ps.reads = ps.updates - ps.firstTouches;
            } else {
                cs.fills = moved;
                ps.reads = moved * distinct;
            }
            parent = child;
        }
    }

    // Sparsity, as expected values (the map-space study's model): compressed
    // tensors move only their nonzeros, and a MAC with a zero operand is
    // skipped, so computes and compute cycles shrink by the product of the
    // input densities. Dense problems skip all of this.
    if (p.sparse()) {
        double effectual = 1.0;
        for (int t = 0; t < T; ++t)
            if (!p.tensors[t].readWrite)
                effectual *= p.tensors[t].density;
        for (int l = 0; l < L; ++l)
            for (int t = 0; t < T; ++t) {
                TensorLevelStats& ts = out.levels[l].tensors[t];
                const double d = p.tensors[t].density;
                if (!ts.kept || d >= 1.0)
                    continue;
                ts.reads = std::llround(double(ts.reads) * d);
                ts.fills = std::llround(double(ts.fills) * d);
                ts.updates = std::llround(double(ts.updates) * d);
            }
        out.computes = std::max<i64>(1, std::llround(double(out.computes) * effectual));
        computeCycles = std::max<i64>(1, std::llround(double(computeCycles) * effectual));
        out.computeCycles = computeCycles;
    }

    // Cycles: compute, stretched by any level whose bandwidth cannot keep up.
    i64 cycles = computeCycles;
    for (int l = 0; l < L; ++l) {
        const StorageLevel& s = a.levels[l];
        LevelStats& ls = out.levels[l];
        i64 need = computeCycles;
        if (s.readBandwidth > 0 || s.writeBandwidth > 0) {
            i64 reads = 0, writes = 0;
            for (int t = 0; t < T; ++t) {
                reads += ls.tensors[t].reads;
                writes += ls.tensors[t].fills + ls.tensors[t].updates;
            }
            if (s.readBandwidth > 0)
                need = std::max(need, static_cast<i64>(std::ceil(double(reads) / s.readBandwidth)));
            if (s.writeBandwidth > 0)
                need =
                    std::max(need, static_cast<i64>(std::ceil(double(writes) / s.writeBandwidth)));
        }
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
        // Exact in double: counts are far below 2^53, and a non-multiple is at
        // least 1/bs away from an integer.
        const double dbs = double(bs);
        auto vectors = [bs, dbs](i64 words) {
            return (bs == 1 || words == 0) ? double(words) : std::ceil(double(words) / dbs);
        };
        double access = 0.0;
        for (int t = 0; t < T; ++t) {
            TensorLevelStats& ts = ls.tensors[t];
            if (!ts.kept)
                continue;
            const double n = double(ls.utilizedInstances);
            ts.readEnergy = vectors(ts.reads) * s.energy.read * n;
            ts.fillEnergy = vectors(ts.fills) * s.energy.write * n;
            ts.updateEnergy = vectors(ts.updates) * s.energy.update * n;
            ts.energy = ts.readEnergy + ts.fillEnergy + ts.updateEnergy;
            access += ts.energy;
        }
        ls.accessEnergy = access;
        // Timeloop (0fc43fb) charges leakage to the utilized instances only.
        ls.leakEnergy = s.energy.leak * double(cycles) * double(ls.utilizedInstances);
        ls.energy = access + ls.leakEnergy;
        total += ls.energy;
    }
    out.computeEnergy = double(out.computes) * a.compute.macEnergy;
    total += out.computeEnergy;
    out.energy = total;
    out.utilization = double(out.computes) / (double(cycles) * double(a.compute.instances()));
    out.edp = total * 1e-12 * double(cycles);
}

} // namespace

void evaluate(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& out) {
    evaluateImpl(p, a, m, out, false);
}

bool isLegal(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& scratch) {
    evaluateImpl(p, a, m, scratch, true);
    return scratch.valid;
}

Evaluation evaluate(const Problem& p, const Architecture& a, const Mapping& m) {
    Evaluation e;
    evaluate(p, a, m, e);
    return e;
}

} // namespace mw
