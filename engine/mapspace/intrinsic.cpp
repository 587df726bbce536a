#include "mapspace/intrinsic.h"

#include "common/error.h"

#include <algorithm>
#include <bit>
#include <numeric>

// How matches are counted (AMOS, digest 001_amos.md section 3):
//
// 1. Match points. A one-to-one assignment of one problem dim to every
//    intrinsic dim, kinds agreeing (a dim of the output is spatial, any other
//    is a reduction, on both sides). Unassigned problem dims are set to 0 and
//    every bound tensor must then look exactly like its operand: each operand
//    coordinate h is matched by a distinct tensor coordinate that reduces to
//    c*h (c > 0; strides and dilations are ignored), and every tensor
//    coordinate left over is constant. So P->i with R->k is no match point
//    (Inputs[P+R] becomes i+k), while P->i with C->k is.
// 2. Matches are the distinct unions of non-empty sets of match points, per
//    intrinsic dim. We enumerate them directly: a choice of problem-dim sets
//    S_h (non-empty, pairwise disjoint) is a union of match points exactly
//    when the match points inside S_1 x ... x S_H cover every member of
//    every S_h. This avoids the 2^points subset walk and gives the same set.
// 3. Every match passes Algorithm 1 (binary access matrices) on the mapped
//    columns; it is checked anyway.
//
// Operand binding: by default the problem's input tensors (tensors that are
// not readWrite, in problem order) bind to the intrinsic's sources in order,
// as AMOS pairs operands by expression order. With OperandBinding::Any every
// bijection is tried, so a matmul also yields the transposed matches.

namespace mw {

namespace {

std::string intrinsicWhere(const Intrinsic& in) {
    return in.name.empty() ? std::string("intrinsic") : "intrinsic '" + in.name + "'";
}

// The intrinsic's structure as bit masks over its dims.
struct Shape {
    int H = 0;
    std::vector<std::vector<int>> coords; // per operand: intrinsic dim of each coordinate
    std::vector<std::uint32_t> opMask;    // per operand
    int outOp = -1;
    std::uint32_t spatial = 0; // dims of the output operand
};

Shape shapeOf(const Intrinsic& in) {
    Shape s;
    s.H = static_cast<int>(in.dims.size());
    for (int o = 0; o < static_cast<int>(in.operands.size()); ++o) {
        const IntrinsicOperand& op = in.operands[o];
        std::vector<int> c;
        std::uint32_t mask = 0;
        for (const auto& n : op.dims) {
            const int h = in.dimIndex(n);
            c.push_back(h);
            mask |= 1u << h;
        }
        s.coords.push_back(c);
        s.opMask.push_back(mask);
        if (op.output) {
            s.outOp = o;
            s.spatial = mask;
        }
    }
    return s;
}

// Step 1's test for one assignment dimOf[h] under one binding.
bool isMatchPoint(const Problem& p, const Shape& s, const std::vector<int>& dimOf,
                  const std::vector<int>& operandTensor) {
    int hOf[kMaxDims];
    std::fill(hOf, hOf + kMaxDims, -1);
    for (int h = 0; h < s.H; ++h)
        hOf[dimOf[h]] = h;
    constexpr int kConstant = -1, kComplex = -2;
    for (int o = 0; o < static_cast<int>(s.coords.size()); ++o) {
        const DataSpace& ds = p.tensors[operandTensor[o]];
        int reduced[kMaxRanks];
        bool used[kMaxRanks] = {};
        for (int r = 0; r < ds.numRanks; ++r) {
            reduced[r] = kConstant;
            for (int i = 0; i < ds.ranks[r].numTerms; ++i) {
                const ProjectionTerm& term = ds.ranks[r].terms[i];
                if (hOf[term.dim] < 0)
                    continue; // an unmapped dim is 0 here
                reduced[r] = (reduced[r] == kConstant && term.coef > 0) ? hOf[term.dim] : kComplex;
            }
        }
        for (int h : s.coords[o]) {
            int r = 0;
            while (r < ds.numRanks && (used[r] || reduced[r] != h))
                ++r;
            if (r == ds.numRanks)
                return false;
            used[r] = true;
        }
        for (int r = 0; r < ds.numRanks; ++r)
            if (!used[r] && reduced[r] != kConstant)
                return false;
    }
    return true;
}

struct Enumerator {
    const Problem& p;
    const Shape& s;
    const std::vector<int>& operandTensor;
    std::uint32_t swSpatial = 0;
    std::vector<std::vector<int>> points; // each: dimOf[h]
    std::vector<int> dimOf;
    std::vector<std::uint32_t> chosen; // S_h masks during the box walk
    std::vector<std::vector<std::uint32_t>> boxes;

    void findPoints(int h, std::uint32_t used) {
        if (h == s.H) {
            if (isMatchPoint(p, s, dimOf, operandTensor))
                points.push_back(dimOf);
            return;
        }
        const bool hwSpatial = (s.spatial >> h) & 1u;
        for (int d = 0; d < p.numDims(); ++d) {
            if ((used >> d) & 1u || bool((swSpatial >> d) & 1u) != hwSpatial)
                continue;
            dimOf[h] = d;
            findPoints(h + 1, used | (1u << d));
        }
    }

    bool covered() const {
        std::vector<std::uint32_t> cover(s.H, 0);
        for (const auto& pt : points) {
            bool inside = true;
            for (int h = 0; h < s.H && inside; ++h)
                inside = (chosen[h] >> pt[h]) & 1u;
            if (inside)
                for (int h = 0; h < s.H; ++h)
                    cover[h] |= 1u << pt[h];
        }
        return cover == chosen;
    }

    // Subsets of each candidate mask in ascending order, outer dims first.
    void walkBoxes(int h, std::uint32_t used, const std::vector<std::uint32_t>& cand) {
        if (h == s.H) {
            if (covered())
                boxes.push_back(chosen);
            return;
        }
        const std::uint32_t mask = cand[h];
        for (std::uint32_t sub = 0; (sub = (sub - mask) & mask) != 0;) {
            if (sub & used)
                continue;
            chosen[h] = sub;
            walkBoxes(h + 1, used | sub, cand);
        }
    }
};

IntrinsicMatch makeMatch(const Problem& p, const Intrinsic& in,
                         const std::vector<std::uint32_t>& sets,
                         const std::vector<int>& operandTensor) {
    IntrinsicMatch m;
    m.operandTensor = operandTensor;
    for (int h = 0; h < static_cast<int>(in.dims.size()); ++h) {
        std::vector<int> dims;
        std::int64_t u = 1;
        for (int d = 0; d < p.numDims(); ++d)
            if ((sets[h] >> d) & 1u) {
                dims.push_back(d);
                if (__builtin_mul_overflow(u, p.dims[d].bound, &u))
                    throw InputError("problem '" + p.name + "'",
                                     "the fused extent of intrinsic dimension '" + in.dims[h].name +
                                         "' overflows 64 bits");
            }
        const std::int64_t e = in.dims[h].size;
        const std::int64_t folds = (u + e - 1) / e;
        m.fused.push_back(dims);
        m.extent.push_back(u);
        m.folds.push_back(folds);
        m.padded = m.padded || u % e != 0;
        m.utilization *= double(u) / (double(folds) * double(e));
    }
    return m;
}

// Splits `size` over the bounds as factors whose product is `size`, with the
// smallest padded volume prod(ceil(b/e)*e); ties go to the first found
// (smaller factors on earlier dims).
void bestSplit(const std::vector<std::int64_t>& divisors, const std::vector<std::int64_t>& bounds,
               std::size_t i, std::int64_t rest, double volume, std::vector<std::int64_t>& cur,
               double& bestVolume, std::vector<std::int64_t>& best) {
    if (i + 1 == bounds.size()) {
        cur[i] = rest;
        const double v = volume * double((bounds[i] + rest - 1) / rest * rest);
        if (v < bestVolume) {
            bestVolume = v;
            best = cur;
        }
        return;
    }
    for (std::int64_t e : divisors) {
        if (e > rest)
            break;
        if (rest % e != 0)
            continue;
        cur[i] = e;
        bestSplit(divisors, bounds, i + 1, rest / e, volume * double((bounds[i] + e - 1) / e * e),
                  cur, bestVolume, best);
    }
}

} // namespace

int Intrinsic::dimIndex(const std::string& n) const {
    for (int h = 0; h < static_cast<int>(dims.size()); ++h)
        if (dims[h].name == n)
            return h;
    return -1;
}

std::int64_t Intrinsic::macs() const {
    std::int64_t n = 1;
    for (const auto& d : dims)
        n *= d.size;
    return n;
}

std::uint32_t IntrinsicMatch::mappedMask() const {
    std::uint32_t m = 0;
    for (const auto& dims : fused)
        m |= dimMask(dims);
    return m;
}

void validateIntrinsic(const Intrinsic& in) {
    const std::string where = intrinsicWhere(in);
    if (in.dims.empty())
        throw InputError(where, "has no dimensions; expected at least one");
    if (in.dims.size() > 16)
        throw InputError(where, "has " + std::to_string(in.dims.size()) +
                                    " dimensions; at most 16 are supported");
    for (int h = 0; h < static_cast<int>(in.dims.size()); ++h) {
        const IntrinsicDim& d = in.dims[h];
        if (d.name.empty())
            throw InputError(where + ".dimensions[" + std::to_string(h) + "]",
                             "name is empty; expected a dimension name");
        if (in.dimIndex(d.name) != h)
            throw InputError(where + ".dimensions." + d.name, "is defined twice");
        if (d.size < 1 || d.size > (std::int64_t(1) << 31))
            throw InputError(where + ".dimensions." + d.name,
                             "size is " + std::to_string(d.size) +
                                 "; expected a positive integer up to 2^31");
        if (d.levelOffset < 0)
            throw InputError(where + ".dimensions." + d.name,
                             "level offset is " + std::to_string(d.levelOffset) +
                                 "; expected 0 (the planned level) or more (levels below it)");
    }
    int outputs = 0;
    std::uint32_t used = 0;
    for (int o = 0; o < static_cast<int>(in.operands.size()); ++o) {
        const IntrinsicOperand& op = in.operands[o];
        const std::string ow =
            where + ".operands." + (op.name.empty() ? "[" + std::to_string(o) + "]" : op.name);
        if (op.name.empty())
            throw InputError(ow, "name is empty; expected an operand name");
        std::uint32_t mask = 0;
        for (const auto& n : op.dims) {
            const int h = in.dimIndex(n);
            if (h < 0)
                throw InputError(ow, "uses unknown dimension '" + n + "'");
            if ((mask >> h) & 1u)
                throw InputError(ow, "uses dimension '" + n + "' twice");
            mask |= 1u << h;
        }
        used |= mask;
        outputs += op.output ? 1 : 0;
    }
    if (outputs != 1 || in.operands.size() < 2)
        throw InputError(where,
                         "has " + std::to_string(outputs) + " output operands and " +
                             std::to_string(in.operands.size() - outputs) +
                             " sources; expected exactly one output and at least one source");
    for (const auto& d : in.dims)
        if (!((used >> in.dimIndex(d.name)) & 1u))
            throw InputError(where + ".dimensions." + d.name, "is used by no operand");
}

Intrinsic matmulIntrinsic(std::int64_t i, std::int64_t j, std::int64_t k) {
    Intrinsic in;
    in.name = "matmul" + std::to_string(i) + "x" + std::to_string(j) + "x" + std::to_string(k);
    in.dims = {{"i", i, IntrinsicAxis::X, 0},
               {"j", j, IntrinsicAxis::Y, 0},
               {"k", k, IntrinsicAxis::X, 1}};
    in.operands = {{"A", {"i", "k"}, false}, {"B", {"k", "j"}, false}, {"C", {"i", "j"}, true}};
    validateIntrinsic(in);
    return in;
}

Intrinsic systolicIntrinsic(std::int64_t rows, std::int64_t cols, std::int64_t k) {
    Intrinsic in = matmulIntrinsic(rows, cols, k);
    in.name =
        "systolic" + std::to_string(rows) + "x" + std::to_string(cols) + "x" + std::to_string(k);
    in.dims[2].axis = IntrinsicAxis::Temporal;
    return in;
}

std::vector<IntrinsicMatch> enumerateIntrinsicMatches(const Problem& p, const Intrinsic& in,
                                                      const IntrinsicMatchOptions& opt) {
    validateIntrinsic(in);
    const Shape s = shapeOf(in);
    std::vector<int> inputs;
    int output = -1, outputs = 0;
    for (int t = 0; t < p.numTensors(); ++t) {
        if (p.tensors[t].readWrite) {
            output = t;
            ++outputs;
        } else {
            inputs.push_back(t);
        }
    }
    std::vector<int> sources;
    for (int o = 0; o < static_cast<int>(in.operands.size()); ++o)
        if (o != s.outOp)
            sources.push_back(o);
    if (outputs != 1 || inputs.size() != sources.size())
        return {};

    std::vector<IntrinsicMatch> matches;
    std::vector<int> perm(inputs.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
        std::vector<int> operandTensor(in.operands.size());
        operandTensor[s.outOp] = output;
        for (std::size_t k = 0; k < sources.size(); ++k)
            operandTensor[sources[k]] = inputs[perm[k]];

        Enumerator e{p, s, operandTensor, p.tensors[output].dimMask, {}, {}, {}, {}};
        e.dimOf.assign(s.H, 0);
        e.findPoints(0, 0);
        if (e.points.empty())
            continue;
        std::vector<std::uint32_t> cand(s.H, 0);
        for (const auto& pt : e.points)
            for (int h = 0; h < s.H; ++h)
                cand[h] |= 1u << pt[h];
        double boxes = 1.0;
        for (std::uint32_t c : cand)
            boxes *= double((std::uint64_t(1) << std::popcount(c)) - 1);
        if (boxes > double(1 << 24))
            throw InputError("problem '" + p.name + "'",
                             "has too many candidate fusions onto " + intrinsicWhere(in));
        e.chosen.assign(s.H, 0);
        e.walkBoxes(0, 0, cand);
        for (const auto& box : e.boxes) {
            IntrinsicMatch m = makeMatch(p, in, box, operandTensor);
            if (accessCompatible(p, in, m))
                matches.push_back(std::move(m));
        }
    } while (opt.binding == OperandBinding::Any && std::next_permutation(perm.begin(), perm.end()));
    return matches;
}

bool accessCompatible(const Problem& p, const Intrinsic& in, const IntrinsicMatch& m) {
    const Shape s = shapeOf(in);
    if (static_cast<int>(m.fused.size()) != s.H || m.operandTensor.size() != in.operands.size())
        return false;
    std::vector<std::uint32_t> Y; // Y[h]: problem dims fused onto h
    for (const auto& dims : m.fused) {
        for (int d : dims)
            if (d < 0 || d >= p.numDims())
                return false;
        Y.push_back(dimMask(dims));
    }
    const std::uint32_t mapped = m.mappedMask();
    for (int o = 0; o < static_cast<int>(in.operands.size()); ++o) {
        const int t = m.operandTensor[o];
        if (t < 0 || t >= p.numTensors() || p.tensors[t].readWrite != in.operands[o].output)
            return false;
        const std::uint32_t X = p.tensors[t].dimMask & mapped; // row of X, mapped columns
        std::uint32_t Xp = 0;                                  // row of X' = Z * Y
        for (int h = 0; h < s.H; ++h) {
            const bool z = (s.opMask[o] >> h) & 1u;
            if (z)
                Xp |= Y[h];
            if (z != ((X & Y[h]) != 0)) // Z'[o][h] = X * Y^T
                return false;
        }
        if (Xp != X)
            return false;
    }
    return true;
}

std::string describeMatch(const Problem& p, const Intrinsic& in, const IntrinsicMatch& m) {
    std::string s;
    for (std::size_t h = 0; h < m.fused.size() && h < in.dims.size(); ++h) {
        s += (h ? ", " : "") + in.dims[h].name + " <- ";
        for (std::size_t i = 0; i < m.fused[h].size(); ++i)
            s += (i ? "*" : "") + p.dims[m.fused[h][i]].name;
    }
    s += " (";
    for (std::size_t o = 0; o < m.operandTensor.size() && o < in.operands.size(); ++o)
        s += (o ? ", " : "") + in.operands[o].name + "=" + p.tensors[m.operandTensor[o]].name;
    return s + ")";
}

IntrinsicPlan planIntrinsic(const Problem& p, const Architecture& a, const Intrinsic& in,
                            const IntrinsicMatch& m, int level) {
    validateIntrinsic(in);
    if (!accessCompatible(p, in, m))
        throw InputError(intrinsicWhere(in), "the match does not fit problem '" + p.name + "' (" +
                                                 describeMatch(p, in, m) + ")");
    const std::string aw =
        a.name.empty() ? std::string("architecture") : "architecture '" + a.name + "'";
    const int L = a.numLevels();
    if (level < 0 || level >= L)
        throw InputError(aw, "has no level " + std::to_string(level) + " for " +
                                 intrinsicWhere(in) + "; expected 0 to " + std::to_string(L - 1));

    // Each level's demand on its X and Y fan-out; temporal dims need a level with loops.
    std::vector<std::int64_t> needX(L, 1), needY(L, 1);
    std::vector<std::string> whoX(L), whoY(L);
    for (const IntrinsicDim& d : in.dims) {
        const int l = level + d.levelOffset;
        if (l >= L)
            throw InputError(aw, intrinsicWhere(in) + " places dimension '" + d.name +
                                     "' at level " + std::to_string(l) + " (" +
                                     std::to_string(d.levelOffset) + " below '" +
                                     a.levels[level].name + "'), but there are only " +
                                     std::to_string(L) + " levels");
        const std::string item = d.name + "=" + std::to_string(d.size);
        if (d.axis == IntrinsicAxis::X) {
            needX[l] *= d.size;
            whoX[l] += (whoX[l].empty() ? "" : " x ") + item;
        } else if (d.axis == IntrinsicAxis::Y) {
            needY[l] *= d.size;
            whoY[l] += (whoY[l].empty() ? "" : " x ") + item;
        } else if (a.levels[l].cls == LevelClass::Dummy) {
            throw InputError(aw + ".levels." + a.levels[l].name,
                             "is a dummy level and has no temporal loops for " +
                                 intrinsicWhere(in) + " dimension '" + d.name + "'");
        }
    }
    for (int l = 0; l < L; ++l) {
        const std::string lw = aw + ".levels." + a.levels[l].name;
        if (needX[l] > a.fanoutX(l))
            throw InputError(lw, "fan-out X is " + std::to_string(a.fanoutX(l)) + " but " +
                                     intrinsicWhere(in) + " needs " + std::to_string(needX[l]) +
                                     " (" + whoX[l] + ")");
        if (needY[l] > a.fanoutY(l))
            throw InputError(lw, "fan-out Y is " + std::to_string(a.fanoutY(l)) + " but " +
                                     intrinsicWhere(in) + " needs " + std::to_string(needY[l]) +
                                     " (" + whoY[l] + ")");
    }

    IntrinsicPlan plan;
    plan.problem = p;
    plan.factor.assign(p.numDims(), 1);
    plan.constraints.levels.assign(L, LevelConstraint{});
    std::vector<char> spatialLevel(L, 0);
    for (int h = 0; h < static_cast<int>(in.dims.size()); ++h) {
        const IntrinsicDim& d = in.dims[h];
        const std::vector<int>& dims = m.fused[h];
        std::vector<std::int64_t> bounds, cur(dims.size()), best(dims.size());
        for (int x : dims)
            bounds.push_back(p.dims[x].bound);
        double bestVolume = 1e300;
        bestSplit(divisorsOf(d.size), bounds, 0, d.size, 1.0, cur, bestVolume, best);

        const int l = level + d.levelOffset;
        LevelConstraint& lc = plan.constraints.levels[l];
        for (std::size_t i = 0; i < dims.size(); ++i) {
            const int x = dims[i];
            const std::int64_t e = best[i];
            plan.factor[x] = e;
            plan.problem.dims[x].bound = (bounds[i] + e - 1) / e * e;
            plan.utilization *= double(bounds[i]) / double(plan.problem.dims[x].bound);
            if (d.axis == IntrinsicAxis::Temporal) {
                lc.temporal[x] = e;
                continue;
            }
            (d.axis == IntrinsicAxis::X ? lc.spatialX : lc.spatialY)[x] = e;
            spatialLevel[l] = 1;
        }
    }
    // A level that hosts the intrinsic spatially does nothing else in space:
    // only the intrinsic's dims may fan out there, and every other spatial
    // factor of that level is pinned to 1.
    for (int l = 0; l < L; ++l) {
        if (!spatialLevel[l])
            continue;
        LevelConstraint& lc = plan.constraints.levels[l];
        std::uint32_t allowed = 0;
        for (int x = 0; x < p.numDims(); ++x) {
            if (lc.spatialX[x] > 0 || lc.spatialY[x] > 0)
                allowed |= 1u << x;
            if (lc.spatialX[x] == 0)
                lc.spatialX[x] = 1;
            if (lc.spatialY[x] == 0)
                lc.spatialY[x] = 1;
        }
        lc.allowSpatial(allowed);
    }
    finalizeProblem(plan.problem);
    return plan;
}

} // namespace mw
