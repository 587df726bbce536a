#pragma once
// A map space's mappings as fixed-length vectors of small integers, for
// learned and black-box searchers (the Python module's encode and decode,
// evaluate_batch). The elements, in this order:
//   per dimension, per prime factor the constraints leave free: the slot it
//     goes to (a level's temporal loop or one axis of its fan-out);
//   per level with temporal loops whose order the constraints leave open:
//     each dimension's rank in the order (outer first; ties by dimension);
//   the same for the spatial loops of each level that fans out;
//   per level below the outermost (not dummy), per tensor the constraints
//     leave open: 1 keep, 0 bypass.
// Every vector within bounds() decodes to a mapping that meets the
// constraints and has the problem's exact factor products; it may still
// overflow a buffer or a fan-out, which the model reports.
#include "mapspace/mapspace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mw {

class MappingEncoding {
  public:
    explicit MappingEncoding(const MapSpace& space);

    const MapSpace& space() const { return *space_; }
    std::size_t size() const { return elements_.size(); }
    // Exclusive upper bound of each element (its lower bound is 0).
    const std::vector<std::int64_t>& bounds() const { return bounds_; }
    // What each element is: "C:3 slot" (the 3rd free prime of C, its slot),
    // "shared_glb order M", "inter_PE_spatial spatial order C", "psum_spad keep Weights".
    std::vector<std::string> names() const;
    // The slot an element's value names (for slot elements), as "shared_glb
    // temporal", "inter_PE_spatial X".
    std::string slotName(int dim, int slot) const;

    // m's vector. InputError when m does not belong to the space: a factor
    // product that is not the dimension's, a factor outside its slots.
    void encode(const Mapping& m, std::int64_t* out) const;
    std::vector<std::int64_t> encode(const Mapping& m) const;
    // false (out untouched) when an element is outside its bounds.
    bool decode(const std::int64_t* in, Mapping& out) const;

  private:
    enum class Kind : std::uint8_t { Prime, Order, SpatialOrder, Keep };
    struct Element {
        Kind kind;
        std::int8_t level; // Order, SpatialOrder, Keep
        std::int8_t dim;   // Prime, Order, SpatialOrder
        std::int8_t tensor;
        std::uint32_t prime; // Prime
    };
    // A level's temporal (kind 0) or spatial (1) order: D rank elements, one
    // per dimension in dimension order, from elements_[first] on.
    struct OrderGroup {
        std::int8_t level;
        std::int8_t kind;
        std::uint32_t first;
    };
    const MapSpace* space_;
    std::vector<Element> elements_;
    std::vector<std::int64_t> bounds_;
    std::vector<OrderGroup> orderGroups_;
    // The constraints' fixed factors, orders and keep choices, and the free
    // factors of dimensions with one slot; every other free factor 1.
    Mapping base_;
};

// Encoded mappings (n rows of encoding.size() elements) decoded and evaluated
// on `threads` threads (0: every core): per row, energy (pJ), cycles, EDP
// (J x cycles) and whether the mapping is valid; an invalid row (outside the
// bounds, or a mapping the model rejects) has NaN figures.
struct EncodedFigures {
    double* energy;
    double* cycles;
    double* edp;
    std::uint8_t* valid;
};
void evaluateEncoded(const MappingEncoding& encoding, const std::int64_t* rows, std::size_t n,
                     int threads, const EncodedFigures& out);

} // namespace mw
