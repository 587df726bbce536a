#pragma once
// AMOS-style intrinsic mapping (Zheng et al., ISCA 2022): a fixed-function
// compute block (a tensor-core-like matrix multiply, a systolic array) is
// described as a tiny loop nest, and the problem's loops are mapped onto its
// dimensions, several problem loops fused onto one intrinsic dimension when
// their access patterns agree. A chosen match becomes a (padded) problem plus
// map-space constraints, so any searcher tiles the rest of the loop nest.
#include "arch/architecture.h"
#include "mapspace/mapspace.h"
#include "workload/problem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mw {

// Where an intrinsic dimension sits in our two-axis fan-out model: on the X or
// Y fan-out of a storage level, or as a temporal loop of a level (a systolic
// array's reduction streams through each PE in time).
enum class IntrinsicAxis { X, Y, Temporal };

struct IntrinsicDim {
    std::string name;
    std::int64_t size = 1; // the intrinsic's fixed extent E_h
    IntrinsicAxis axis = IntrinsicAxis::X;
    // Relative to the level handed to planIntrinsic: 0 is that level's
    // fan-out, 1 the level below it (e.g. the dot-product lanes inside a PE).
    int levelOffset = 0;
};

// One operand as its access list: one intrinsic dimension per coordinate, so
// A[i,k] is {"i", "k"}. Exactly one operand is the output.
struct IntrinsicOperand {
    std::string name;
    std::vector<std::string> dims;
    bool output = false;
};

struct Intrinsic {
    std::string name;
    std::vector<IntrinsicDim> dims;
    // Sources in order (the problem's input tensors bind to them in this order
    // by default, as AMOS binds by expression order), the output anywhere.
    std::vector<IntrinsicOperand> operands;

    int dimIndex(const std::string& name) const; // -1 when unknown
    std::int64_t macs() const;                   // product of the sizes
};

// Throws InputError naming the intrinsic and field: empty or duplicate names,
// a size below 1, an operand using an unknown dimension, not exactly one output.
void validateIntrinsic(const Intrinsic& in);

// C[i,j] += A[i,k] * B[k,j] on an i x j x k multiply unit (Tensor Core like):
// i on X and j on Y of one level's fan-out, k on X one level below (each PE is
// a k-wide dot product).
Intrinsic matmulIntrinsic(std::int64_t i, std::int64_t j, std::int64_t k);
// The same computation on a rows x cols output-stationary systolic array: i on
// X and j on Y of one level, k a temporal loop of the level below (the PE).
Intrinsic systolicIntrinsic(std::int64_t rows, std::int64_t cols, std::int64_t k);

// Which problem input tensor binds to which intrinsic source operand.
enum class OperandBinding {
    InOrder, // i-th input tensor <-> i-th source (AMOS's convention; the paper's counts)
    Any      // every bijection: transposed mappings are distinct matches too
};

struct IntrinsicMatchOptions {
    OperandBinding binding = OperandBinding::InOrder;
};

struct IntrinsicMatch {
    std::vector<std::vector<int>> fused; // per intrinsic dim: problem dims, in problem order
    std::vector<int> operandTensor;      // per intrinsic operand: the bound problem tensor
    std::vector<std::int64_t> extent;    // per intrinsic dim: product of fused bounds (U_h)
    std::vector<std::int64_t> folds;     // per intrinsic dim: ceil(U_h / E_h)
    bool padded = false;                 // some U_h is not a multiple of E_h
    // Useful MACs per intrinsic slot with fuse-then-fold (wrap-around) tiling:
    // prod U_h / prod (folds_h * E_h).
    double utilization = 1.0;

    std::uint32_t mappedMask() const; // bit d: problem dim d is on the intrinsic
};

// Every legal match, deterministic order. Throws InputError for a bad intrinsic;
// returns none when the problem's tensor structure cannot fit (input count
// differs from the sources, or there is not exactly one output).
std::vector<IntrinsicMatch> enumerateIntrinsicMatches(const Problem& p, const Intrinsic& in,
                                                      const IntrinsicMatchOptions& opt = {});

// Algorithm 1 of the paper (binary access matrices) on the mapped columns:
// true when the match neither adds nor drops any tensor-index access.
bool accessCompatible(const Problem& p, const Intrinsic& in, const IntrinsicMatch& m);

// "i <- N*P*Q, j <- M, k <- C*R*S" for logs and the UI.
std::string describeMatch(const Problem& p, const Intrinsic& in, const IntrinsicMatch& m);

struct IntrinsicPlan {
    Problem problem;                  // bounds of mapped dims rounded up where padding is needed
    MapSpaceConstraints constraints;  // one LevelConstraint per architecture level
    std::vector<std::int64_t> factor; // per problem dim: its share of the intrinsic (1 if unmapped)
    double utilization = 1.0;         // original MACs / padded MACs of this per-dim plan
};

// Pins the match onto `level` (intrinsic dims with levelOffset o go to level +
// o): spatial dims become fixed spatialX/spatialY factors and the level's other
// spatial use is forbidden; temporal dims become fixed temporal factors. Throws
// InputError when a level is missing or its fan-out cannot hold the intrinsic.
IntrinsicPlan planIntrinsic(const Problem& p, const Architecture& a, const Intrinsic& in,
                            const IntrinsicMatch& m, int level);

} // namespace mw
