#pragma once
// A dense affine tensor-algebra problem: named dimensions with bounds, and data
// spaces whose coordinates are sums of coefficient x dimension terms.
#include "common/limits.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mw {

struct ProjectionTerm {
    int dim = 0;           // index into Problem::dims
    std::int64_t coef = 1; // stride or dilation
};

// One coordinate of a tensor, e.g. the input width P*Wstride + R*Wdilation.
struct Rank {
    std::array<ProjectionTerm, kMaxTerms> terms{};
    int numTerms = 0;
};

struct DataSpace {
    std::string name;
    std::array<Rank, kMaxRanks> ranks{};
    int numRanks = 0;
    bool readWrite = false;    // outputs: partial results are read, modified and updated
    std::uint32_t dimMask = 0; // bit d set when dimension d appears in a coordinate
    // Expected fraction of nonzeros (1 = dense). Sparse tensors are stored
    // compressed and MACs with a zero operand are skipped (see cost_model.cpp).
    double density = 1.0;
};

struct Dimension {
    std::string name;
    std::int64_t bound = 1;
};

struct Problem {
    std::string name;
    std::vector<Dimension> dims;
    std::vector<DataSpace> tensors;
    // Named coefficients (strides, dilations) kept for display and export.
    std::vector<std::pair<std::string, std::int64_t>> coefficients;

    int numDims() const { return static_cast<int>(dims.size()); }
    int numTensors() const { return static_cast<int>(tensors.size()); }
    int dimIndex(const std::string& name) const;    // -1 when unknown
    int tensorIndex(const std::string& name) const; // -1 when unknown
    std::int64_t computes() const;                  // product of all bounds
    bool sparse() const;                            // some tensor has density < 1
    // Elements in tensor t's bounding box: per rank, 1 + sum |coef| (bound - 1).
    std::int64_t tensorSize(int t) const;
    // Elements of tensor t that some computation reads or writes: fewer than
    // tensorSize when a stride skips coordinates (a 1x1 convolution with
    // stride 2 touches a quarter of its input).
    std::int64_t touchedElements(int t) const;
    // Rank r of tensor t alone: its extent, and the coordinates touched.
    std::int64_t rankExtent(int t, int r) const;
    std::int64_t rankTouched(int t, int r) const;
};

// Fills dimMask and checks every invariant; throws InputError naming the field.
void finalizeProblem(Problem& problem);

// A data space built from rank expressions over dimension names:
// {{{"P", 1}, {"R", 1}}, {{"C", 1}}} is the two-coordinate tensor [P+R, C].
struct TensorSpec {
    std::string name;
    std::vector<std::vector<std::pair<std::string, std::int64_t>>> ranks;
    bool readWrite = false;
};
Problem makeProblem(std::string name, const std::vector<Dimension>& dims,
                    const std::vector<TensorSpec>& tensors,
                    std::vector<std::pair<std::string, std::int64_t>> coefficients = {});

} // namespace mw
