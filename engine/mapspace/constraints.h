#pragma once
// What users may pin down in the map space, per level, as Timeloop's mapper
// constraints say it: fixed tile factors (temporal, and spatial per axis),
// which dimensions may fan out on each axis, loop orders (whole, or some
// dimensions outermost and some innermost with the rest free), keep or
// bypass of each tensor, and a minimum spatial utilization.
#include "common/limits.h"

#include <array>
#include <cstdint>
#include <vector>

namespace mw {

// The bit mask of dimensions `dims` (bit d for dimension d), as the
// constraints keep sets of dimensions.
inline std::uint32_t dimMask(const std::vector<int>& dims) {
    std::uint32_t m = 0;
    for (int d : dims)
        m |= 1u << d;
    return m;
}

// A loop order constraint, as a Timeloop permutation constraint says it:
// some dimensions outermost in a given order, some innermost in a given
// order, the rest free between them. Only the order of real loops (factor
// greater than 1) matters.
struct OrderConstraint {
    std::array<std::uint8_t, kMaxDims> outer{}; // outermost first
    std::array<std::uint8_t, kMaxDims> inner{}; // outermost first: the last is innermost
    std::uint8_t numOuter = 0;
    std::uint8_t numInner = 0;

    bool constrains() const { return numOuter + numInner > 0; }
    // Every dimension placed: no choice left.
    bool fixes(int numDims) const { return numOuter + numInner >= numDims; }
    bool isFree(int d) const; // neither outer nor inner
    // Moves the constrained dimensions of `order` (outer to inner) to their
    // places; the free ones keep their relative order between them.
    void apply(std::array<std::uint8_t, kMaxDims>& order, int numDims) const;
    // Whether the real loops (bit d of `real`) of `order` are in an order
    // that apply() leaves as it is.
    bool holds(const std::array<std::uint8_t, kMaxDims>& order, std::uint32_t real,
               int numDims) const;
};

struct LevelConstraint {
    std::array<std::int64_t, kMaxDims> temporal; // fixed temporal factor, or 0 when free
    // Fixed spatial factors on each axis, or 0 when free (an intrinsic's
    // dimensions are pinned to the fan-out this way).
    std::array<std::int64_t, kMaxDims> spatialX;
    std::array<std::int64_t, kMaxDims> spatialY;
    OrderConstraint order;               // temporal loops
    OrderConstraint spatialOrder;        // spatial loops (X and Y together, as Mapping keeps them)
    std::uint8_t keepFixed = 0;          // bit t: keep of tensor t is fixed ...
    std::uint8_t keepValue = 0;          // ... to this bit
    std::uint32_t spatialAllowedX = ~0u; // bit d: d may fan out on X from this level
    std::uint32_t spatialAllowedY = ~0u; // ... on Y

    LevelConstraint() {
        temporal.fill(0);
        spatialX.fill(0);
        spatialY.fill(0);
    }
    void allowSpatial(std::uint32_t dims) { spatialAllowedX = spatialAllowedY = dims; }
    // `mask` with the fixed keep bits set as the constraint fixes them.
    std::uint8_t withFixedKeeps(unsigned mask) const {
        return static_cast<std::uint8_t>((mask & ~unsigned(keepFixed)) | (keepValue & keepFixed));
    }
    // Whether `mask` keeps every fixed tensor as the constraint fixes it.
    bool keepsHold(unsigned mask) const {
        return (mask & keepFixed) == unsigned(keepValue & keepFixed);
    }
};

struct MapSpaceConstraints {
    std::vector<LevelConstraint> levels; // empty, or one per architecture level
    double minSpatialUtilization = 0.0;  // used MACs / MACs, 0..1
};

} // namespace mw
