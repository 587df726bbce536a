#include "model/cost_model.h"

#include "model/loop_nest.h"
#include "model/spatial_fanout.h"

#include "arch/architecture.h"
#include "mapping/mapping.h"
#include "workload/problem.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

// Semantics: Timeloop 0fc43fb's, for dense tensor algebra. Legality and
// tiles are here; what moves between levels is counted in data_movement.cpp
// (the nest analysis in closed form); cycles and energy are here again:
//
// * Legality: factors multiply to the bounds, loop orders are permutations,
//   one spatial factor per dimension and level, spatial loops only at levels
//   that fan out, and fan-outs checked as Timeloop checks them: at every
//   level (and at the MACs), the spatial factors of all levels above it
//   multiply to at most its mesh on each axis. A level's own factor may thus
//   exceed its own fan-out when the levels above leave room.
// * A level's tile of a tensor is the bounding box of the coordinates touched
//   by every loop inside it (sliding windows give P + R - 1 and the like).
// * Cycles: temporal iterations, stretched where a level's read or write
//   bandwidth (words per cycle per instance) cannot keep up, computed in
//   Timeloop's floating-point order so that the rounding agrees.
// * Energy: per tensor and action, scalar accesses rounded up to whole vector
//   accesses of blockSize words, times the vector energy, over all utilized
//   instances (utilized clusters, where instances share an access);
//   leakage per utilized instance and cycle.

namespace mw {

namespace {

using i64 = std::int64_t;

// A tile's words as stored: a sparse tensor compressed to its expected
// nonzeros (its traffic is scaled once the dense counts are known).
i64 storedWords(i64 tile, double density) {
    return density < 1.0 ? std::max<i64>(1, static_cast<i64>(std::ceil(double(tile) * density)))
                         : tile;
}

using model_detail::Factors;
using model_detail::LoopNest;

// Not the model's address: a model made where a destroyed one was would
// take that one's cache entries for its own.
std::uint64_t nextModelId() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

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

// An order byte's bit: 1 << b for a dimension (b < kMaxDims), bit 15 for
// anything else, which no dimension's bit set matches. (A table: one load
// per byte, and no shift by an out-of-range byte.)
constexpr std::array<std::uint32_t, 256> kOrderBit = [] {
    static_assert(kMaxDims < 15, "bit 15 marks a byte that is no dimension");
    std::array<std::uint32_t, 256> bit{};
    for (int b = 0; b < 256; ++b)
        bit[std::size_t(b)] = b < kMaxDims ? 1u << b : 1u << 15;
    return bit;
}();

// Whether level lm's temporal and spatial orders are permutations of the
// problem's dimensions (`all`: one bit per dimension).
bool ordersArePermutations(const LevelMapping& lm, int D, std::uint32_t all) {
    std::uint32_t temporal = 0, spatial = 0;
    for (int i = 0; i < D; ++i) {
        temporal |= kOrderBit[lm.order[std::size_t(i)]];
        spatial |= kOrderBit[lm.spatialOrder[std::size_t(i)]];
    }
    return (temporal | (spatial << 16)) == (all | (all << 16));
}

void checkOutermostKeeps(const Problem& p, const Mapping& m, Evaluation& out) {
    for (int t = 0; t < p.numTensors(); ++t)
        if (!m.levels[0].keeps(t))
            out.addViolation(violation(ViolationKind::OutermostMustKeep, 0, t, -1, 0, 0));
}

// The legality pass for a mapping whose factors are those of one that passed
// it: of its checks, only those of the orders and keeps can fail (reported
// as checkAndFactor reports them). False when an order is malformed.
bool checkOrdersAndKeeps(const Problem& p, const Mapping& m, int L, Evaluation& out) {
    const int D = p.numDims();
    const std::uint32_t all = (1u << D) - 1;
    bool malformed = false;
    for (int l = L - 1; l >= 0; --l)
        if (!ordersArePermutations(m.levels[l], D, all)) {
            out.addViolation(violation(ViolationKind::BadPermutation, l, -1, -1, 0, 0));
            malformed = true;
        }
    checkOutermostKeeps(p, m, out);
    return !malformed;
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
    bool malformed = false; // tiles cannot be computed
    for (int d = 0; d < D; ++d) {
        f.ext[L][d] = 1;
    }
    // Each level's spatial factors per axis, zeros taken as ones, in doubles:
    // absurd factors cannot overflow them, and below 2^53 they are exact.
    double axisX[kMaxLevels], axisY[kMaxLevels];
    for (int l = L - 1; l >= 0; --l) {
        const LevelMapping& lm = m.levels[l];
        using u64 = std::uint64_t;
        u64 notOne = 0;     // zero when every temporal factor is 1
        u64 spatialOff = 0; // zero when every spatial factor is 1
        for (int i = 0; i < D; ++i) {
            const i64 t = lm.temporal[i], x = lm.spatialX[i], y = lm.spatialY[i];
            notOne |= u64(t) - 1;
            spatialOff |= (u64(x) - 1) | (u64(y) - 1);
            // Unsigned products: absurd factors wrap (defined) and then fail the
            // product check instead of overflowing.
            f.ext[l][i] = static_cast<i64>(u64(f.ext[l + 1][i]) * u64(t) * u64(x) * u64(y));
        }
        // The fan-out's products and checks only where it has a factor (on a
        // search's mappings, the same few levels every time: predicted).
        i64 fx = 1, fy = 1;
        double ax = 1.0, ay = 1.0;
        std::uint32_t dimsX = 0, dimsY = 0;
        if (spatialOff != 0) {
            for (int i = 0; i < D; ++i) {
                const i64 x = lm.spatialX[i], y = lm.spatialY[i];
                fx *= x;
                fy *= y;
                dimsX |= std::uint32_t(x > 1) << i;
                dimsY |= std::uint32_t(y > 1) << i;
                ax *= double(std::max<i64>(x, 1));
                ay *= double(std::max<i64>(y, 1));
                // Timeloop's mapping has one spatial factor per dimension and
                // level; its split sends it to X or Y, never to both.
                if ((x > 1) & (y > 1)) // (one branch, almost never taken)
                    out.addViolation(violation(ViolationKind::SplitAxes, l, -1, i, x, y));
            }
        }
        f.fanout[l] = fx * fy;
        f.spatialDims[l][0] = dimsX;
        f.spatialDims[l][1] = dimsY;
        f.hasTemporal[l] = notOne != 0;
        axisX[l] = ax;
        axisY[l] = ay;
        if (!ordersArePermutations(lm, D, all)) {
            out.addViolation(violation(ViolationKind::BadPermutation, l, -1, -1, 0, 0));
            malformed = true;
        }
        // Timeloop has no spatial loops at a level whose children are as
        // many as its instances.
        if (f.fanout[l] > 1 && a.fanoutX(l) * a.fanoutY(l) == 1)
            out.addViolation(violation(ViolationKind::NoFanout, l, -1, -1, std::max(fx, fy), 1));
    }
    // Fan-outs as Timeloop checks them: below every level, the spatial
    // factors of all levels above multiply to at most its mesh per axis.
    // (Per level, not per dimension: the products above serve. A product is
    // compared exactly below 2^53, and one beyond is beyond any mesh; it is
    // reported saturated, so that absurd factors stay absurd.)
    {
        auto reported = [](double product) {
            constexpr double cap = double(i64(1) << 40);
            return i64(product < cap ? product : cap);
        };
        double cumX = 1.0, cumY = 1.0;
        for (int l = 0; l < L; ++l) {
            cumX *= axisX[l];
            cumY *= axisY[l];
            const bool inner = l + 1 < L;
            const i64 meshX = inner ? a.levels[l + 1].meshX : a.compute.meshX;
            const i64 meshY = inner ? a.levels[l + 1].meshY : a.compute.meshY;
            if (cumX > double(meshX))
                out.addViolation(
                    violation(ViolationKind::FanoutX, l + 1, -1, -1, reported(cumX), meshX));
            if (cumY > double(meshY))
                out.addViolation(
                    violation(ViolationKind::FanoutY, l + 1, -1, -1, reported(cumY), meshY));
        }
    }
    for (int d = 0; d < D; ++d) {
        if (f.ext[0][d] == p.dims[d].bound)
            continue;
        malformed = true;
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
    checkOutermostKeeps(p, m, out);
    // Tiles (and so capacities) are well defined unless factors or orders
    // are malformed; fan-out violations leave them so, and Timeloop reports
    // an inner level's capacity before an outer level's fan-out.
    return !malformed;
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

// With a cache: its deliveries, of which tensor t's first reuse[t] stand,
// and its factors and tiles, written there; with `tilesFrom` (a valid
// entry, maybe the cache itself, whose factors are all m's), taken from it.
void evaluateImpl(const Problem& p, const Architecture& a, const model_detail::Terms& terms,
                  const Mapping& m, Evaluation& out, bool legalityOnly,
                  EvaluationCache::Entry* cache = nullptr, const int* reuse = nullptr,
                  const EvaluationCache::Entry* tilesFrom = nullptr,
                  model_detail::FanoutMemo* fanouts = nullptr) {
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
    // What a mapping that stops before its tiles reports of its levels:
    // nothing. (Past that point the tile pass writes every level whole.)
    auto clearLevels = [&] {
        for (int l = 0; l < L && l < kMaxLevels; ++l) {
            out.levels[l].capacityUsed = 0;
            for (int t = 0; t < T && t < kMaxTensors; ++t)
                out.levels[l].tensors[t] = TensorLevelStats{};
        }
    };

    if (L > kMaxLevels || D > kMaxDims || T > kMaxTensors) {
        clearLevels();
        out.addViolation(violation(ViolationKind::LevelCount, -1, -1, -1, kMaxLevels, L));
        return;
    }
    Factors ownFactors;
    model_detail::Tiles ownTiles;
    Factors& f = cache ? cache->factors : ownFactors;
    model_detail::Tiles& tiles = cache ? cache->tiles : ownTiles;
    if (tilesFrom) {
        if (tilesFrom != cache) { // the levels in use
            std::copy_n(&tilesFrom->factors.ext[0][0], (L + 1) * kMaxDims, &f.ext[0][0]);
            std::copy_n(tilesFrom->factors.fanout, L, f.fanout);
            std::copy_n(tilesFrom->factors.hasTemporal, L, f.hasTemporal);
            std::copy_n(&tilesFrom->factors.spatialDims[0][0], 2 * L, &f.spatialDims[0][0]);
            std::copy_n(&tilesFrom->tiles.extent[0][0], L * kMaxTensors * kMaxRanks,
                        &tiles.extent[0][0]);
            std::copy_n(&tilesFrom->tiles.size[0][0], L * kMaxTensors, &tiles.size[0][0]);
        }
        if (!checkOrdersAndKeeps(p, m, L, out)) {
            clearLevels();
            return;
        }
    } else if (!checkAndFactor(p, a, m, out, f)) {
        clearLevels();
        return;
    }
    const auto& ext = f.ext;

    // Tiles of every tensor at every level (the data movement needs the
    // bypassed ones too). The outermost level's tiles span the bounds (the
    // products were checked): they are the problem's, copied. (Copying also
    // a level with no factor from the one inside it was no faster: the
    // branch that picks those levels is a coin toss in a search.)
    if (!tilesFrom) {
        std::copy_n(terms.wholeExtent, kMaxTensors * kMaxRanks, tiles.extent[0]);
        std::copy_n(terms.wholeSize, T, tiles.size[0]);
        for (int l = 1; l < L; ++l)
            model_detail::tileExtentsAll(terms, T, ext[l], tiles.extent[l], tiles.size[l]);
    }
    // Capacities of the kept tiles.
    i64 instances = 1; // utilized instances of level l: fan-outs above it
    for (int l = 0; l < L; ++l) {
        LevelStats& ls = out.levels[l];
        ls.utilizedInstances = instances;
        ls.capacityUsed = 0;
        instances *= f.fanout[l];
        const std::uint8_t keepMask = m.levels[l].keepMask;
        for (int t = 0; t < T; ++t) {
            const DataSpace& ds = p.tensors[t];
            const i64 tile = tiles.size[l][t];
            const i64 stored = storedWords(tile, ds.density);
            // (Selected, not branched on: keeps are a coin toss in a search.)
            const bool kept = (keepMask >> t) & 1u;
            // Every field written, not `ts = TensorLevelStats{}`: GCC clears
            // the struct with `rep stos`, whose start-up took a sixth of this
            // function's time (perf, bench model).
            static_assert(sizeof(TensorLevelStats) == 88, "write the new field here");
            TensorLevelStats& ts = ls.tensors[t];
            ts.kept = kept;
            ts.tile = kept ? stored : 0;
            ts.reads = ts.fills = ts.updates = ts.firstTouches = 0;
            ts.sharedBy = 1;
            ts.energy = ts.readEnergy = ts.fillEnergy = ts.updateEnergy = 0.0;
            ls.capacityUsed += ts.tile;
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
        } else if (s.minUtilization > 0.0 && l > 0 && !s.unbounded()) {
            // Timeloop's floor on the words of the level left by multiple
            // buffering (buffer.cpp: effective_size x min_utilization).
            const double effective = std::floor(double(s.capacityWords) / s.multipleBuffering);
            const double floor = effective * s.minUtilization;
            if (double(ls.capacityUsed) < floor)
                out.addViolation(violation(ViolationKind::MinUtilization, l, -1, -1,
                                           ls.capacityUsed, i64(std::ceil(floor))));
        }
    }
    out.utilizedMacs = instances;
    if (legalityOnly || !out.valid)
        return;

    LoopNest nest;
    model_detail::buildLoopNest(p, a, m, f, nest);
    i64 computeCycles = nest.computeCycles;
    out.computeCycles = computeCycles;
    for (int t = 0; t < T; ++t)
        model_detail::countDataMovement(p, a, m, f, terms, tiles, nest, t,
                                        cache ? cache->deliveries[t].data() : nullptr,
                                        cache ? reuse[t] : 0, fanouts, out);

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
    // Timeloop sums each tensor's words per compute cycle and divides the
    // compute cycles by the resulting slowdown; the same operations in the
    // same order round the same way.
    i64 cycles = computeCycles;
    const double cc = double(computeCycles);
    for (int l = 0; l < L; ++l) {
        const StorageLevel& s = a.levels[l];
        LevelStats& ls = out.levels[l];
        i64 need = computeCycles;
        // A level whose words are well under its bandwidth cannot stretch
        // the cycles: its rates, summed as below, are within a few ulps of
        // these totals over the compute cycles, and 1e-9 is far beyond that.
        // (This skips 2 T divisions and a ceil call for most levels.)
        i64 readWords = 0, writeWords = 0;
        for (int t = 0; t < T; ++t) {
            readWords += ls.tensors[t].reads;
            writeWords += ls.tensors[t].fills + ls.tensors[t].updates;
        }
        const double margin = cc * (1.0 - 1e-9);
        const bool readsFit = s.readBandwidth <= 0 || double(readWords) < s.readBandwidth * margin;
        const bool writesFit =
            s.writeBandwidth <= 0 || double(writeWords) < s.writeBandwidth * margin;
        if (!(readsFit && writesFit) || computeCycles >= (i64(1) << 53)) {
            double readRate = 0.0, writeRate = 0.0;
            for (int t = 0; t < T; ++t) {
                readRate += double(ls.tensors[t].reads) / cc;
                writeRate += double(ls.tensors[t].fills + ls.tensors[t].updates) / cc;
            }
            double slowdown = 1.0;
            if (s.readBandwidth > 0 && s.readBandwidth < readRate)
                slowdown = std::min(slowdown, s.readBandwidth / readRate);
            if (s.writeBandwidth > 0 && s.writeBandwidth < writeRate)
                slowdown = std::min(slowdown, s.writeBandwidth / writeRate);
            need = static_cast<i64>(std::ceil(cc / slowdown));
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
        // A block of 2^k words divides by a shift (the same whole number).
        const bool pow2 = bs > 1 && (bs & (bs - 1)) == 0;
        const int shift = pow2 ? __builtin_ctzll(static_cast<unsigned long long>(bs)) : 0;
        auto vectors = [bs, dbs, pow2, shift](i64 words) {
            return bs == 1 ? double(words)
                   : pow2  ? double((words + bs - 1) >> shift)
                           : std::ceil(double(words) / dbs);
        };
        double access = 0.0;
        // Instances that pay for accesses: each utilized cluster once
        // (Timeloop spreads a cluster's access over its utilized instances).
        const double n =
            s.clusterSize == 1
                ? double(ls.utilizedInstances)
                : double(std::min<i64>(ls.utilizedInstances, s.instances() / s.clusterSize));
        // Every tensor, kept or not: one not kept has no accesses, so its
        // energies come out 0 as they were cleared, and no branch is
        // mispredicted on the keeps.
        for (int t = 0; t < T; ++t) {
            TensorLevelStats& ts = ls.tensors[t];
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

bool model_detail::factorize(const Problem& p, const Architecture& a, const Mapping& m,
                             Factors& f) {
    Evaluation scratch;
    return checkAndFactor(p, a, m, scratch, f);
}

CostModel::CostModel(const Problem& p, const Architecture& a)
    : p_(&p), a_(&a), terms_(p), id_(nextModelId()) {
    const char* check = std::getenv("MAPWRIGHT_CHECK_INCREMENTAL");
    checkIncremental_ = check && *check && std::string_view(check) != "0";
}

void CostModel::evaluate(const Mapping& m, Evaluation& out) const {
    evaluateImpl(*p_, *a_, terms_, m, out, false);
}

namespace {

// Whether two evaluations agree on every figure (doubles bit for bit).
bool sameEvaluation(const Evaluation& x, const Evaluation& y) {
    if (x.valid != y.valid || x.numViolations != y.numViolations)
        return false;
    if (!x.valid) // (the figures of an invalid evaluation are left as they were)
        return true;
    if (x.cycles != y.cycles || x.energy != y.energy || x.edp != y.edp ||
        x.computeCycles != y.computeCycles)
        return false;
    for (int l = 0; l < x.numLevels; ++l) {
        const LevelStats &a = x.levels[l], &b = y.levels[l];
        if (a.cycles != b.cycles || a.energy != b.energy || a.capacityUsed != b.capacityUsed)
            return false;
        for (int t = 0; t < x.numTensors; ++t) {
            const TensorLevelStats &u = a.tensors[t], &v = b.tensors[t];
            if (u.reads != v.reads || u.fills != v.fills || u.updates != v.updates ||
                u.sharedBy != v.sharedBy || u.energy != v.energy || u.tile != v.tile)
                return false;
        }
    }
    return true;
}

} // namespace

void CostModel::evaluate(const Mapping& m, Evaluation& out, EvaluationCache& cache) const {
    const int L = a_->numLevels();
    const int T = p_->numTensors();
    // Per entry: levels 0..k-1 equal (their loops) leave the deliveries of
    // levels 0..k-1 standing, unless a keep bit of one of levels 1..k differs.
    int reuse[2][kMaxTensors] = {};
    int total[2] = {-1, -1};
    bool factorsEqual[2] = {false, false}; // every level's
    for (int e = 0; e < 2; ++e) {
        const EvaluationCache::Entry& entry = cache.entries[std::size_t(e)];
        if (entry.model != id_ || entry.mapping.numLevels != L || m.numLevels != L)
            continue;
        // The levels from the outermost with the same loops, and whether
        // every level has the same factors.
        // (Most candidates of a breeding searcher differ in an outer level's
        // factors: the walk stops there.)
        int same = 0;
        bool factors = true;
        for (int l = 0; l < L && (factors || same == l); ++l) {
            const bool f = sameFactors(m.levels[l], entry.mapping.levels[l]);
            if (same == l && f && sameOrders(m.levels[l], entry.mapping.levels[l]))
                ++same;
            factors = factors && f;
        }
        factorsEqual[e] = factors;
        total[e] = 0;
        for (int t = 0; t < T; ++t) {
            int r = same;
            for (int l = 1; l <= r && l < L; ++l)
                if (m.levels[l].keeps(t) != entry.mapping.levels[l].keeps(t)) {
                    r = l - 1;
                    break;
                }
            reuse[e][t] = r;
            total[e] += r;
        }
    }
    const int from = total[1] > total[0] ? 1 : 0; // the entry reused
    const int into = 1 - from;                    // the one replaced by m
    EvaluationCache::Entry& target = cache.entries[std::size_t(into)];
    int* use = reuse[from];
    if (total[from] < 0) {
        for (int t = 0; t < T; ++t)
            use[t] = 0;
    } else {
        const EvaluationCache::Entry& source = cache.entries[std::size_t(from)];
        for (int t = 0; t < T; ++t)
            std::copy_n(source.deliveries[std::size_t(t)].begin(), use[t],
                        target.deliveries[std::size_t(t)].begin());
    }
    int reused = 0;
    for (int t = 0; t < T; ++t)
        reused += use[t];
    cache.levelsReused += reused;
    cache.levelsCounted += L * T - reused;
    ++cache.evaluations;
    // Factors and tiles: the target's own where they are m's (no copy), else
    // the reused entry's.
    const EvaluationCache::Entry* known = factorsEqual[into]   ? &target
                                          : factorsEqual[from] ? &cache.entries[std::size_t(from)]
                                                               : nullptr;
    cache.tilesReused += known != nullptr;
    model_detail::FanoutMemo& fanouts = *cache.fanouts;
    if (fanouts.model != id_) { // (described with another model's projections)
        fanouts.forgetAll();
        fanouts.model = id_;
    }
    target.model = 0; // until the deliveries are m's
    evaluateImpl(*p_, *a_, terms_, m, out, false, &target, use, known, &fanouts);
    // Deliveries are counted once tiles and capacities pass; an invalid m
    // leaves them half written.
    if (out.valid) {
        target.model = id_;
        copyLevelsInUse(target.mapping, m);
    }
    if (checkIncremental_) {
        Evaluation full;
        evaluate(m, full);
        if (!sameEvaluation(full, out)) {
            std::fprintf(stderr, "MAPWRIGHT_CHECK_INCREMENTAL: an incremental evaluation differs "
                                 "from the full one\n");
            std::abort();
        }
    }
}

std::int64_t CostModel::tileWords(const std::int64_t* ext, std::uint8_t keepMask) const {
    // Only the kept tensors' tiles (the moves ask for one or two tensors as
    // often as for all).
    i64 words = 0;
    for (unsigned kept = keepMask & ((1u << p_->numTensors()) - 1); kept != 0; kept &= kept - 1) {
        const int t = __builtin_ctz(kept);
        i64 extents[kMaxRanks];
        const i64 tile = terms_.paired ? model_detail::pairedTileWords(terms_, t, ext, extents)
                                       : model_detail::tileExtents(terms_, t, ext, extents);
        words += storedWords(tile, p_->tensors[t].density);
    }
    return words;
}

bool CostModel::isLegal(const Mapping& m, Evaluation& scratch) const {
    evaluateImpl(*p_, *a_, terms_, m, scratch, true);
    return scratch.valid;
}

void evaluate(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& out) {
    CostModel(p, a).evaluate(m, out);
}

bool isLegal(const Problem& p, const Architecture& a, const Mapping& m, Evaluation& scratch) {
    return CostModel(p, a).isLegal(m, scratch);
}

Evaluation evaluate(const Problem& p, const Architecture& a, const Mapping& m) {
    Evaluation e;
    evaluate(p, a, m, e);
    return e;
}

} // namespace mw
