#pragma once
// The loop orders the optimal searcher evaluates for one tiling (factors and
// keeps fixed): per level, one temporal order per signature no other one
// dominates, or every order where Timeloop's stride-repeat and link rules can
// see more than the signature (model/order_effects.h); per fanning level, one
// spatial order unless link transfers can tell its orders apart. The best of
// them is the best over every order the constraints allow.
#include "mapspace/mapspace.h"
#include "model/order_effects.h"
#include "model/terms.h"

#include <array>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace mw {

// A level's fan-out as multicast and link transfers see it: its spatial
// factors and their strides (each fanning dimension's extent inside the
// level). Distinct offsets and neighbour translations depend on nothing
// else, so tilings that share it share their descriptions.
using FanoutKey = std::array<std::uint32_t, 1 + 3 * kMaxDims>;
FanoutKey fanoutKey(const Mapping& m, int level, int numDims);
struct FanoutKeyHash {
    std::size_t operator()(const FanoutKey& k) const {
        std::uint64_t h = 0x243f6a8885a308d3ull;
        for (std::uint32_t v : k)
            h = (h ^ v) * 0x9e3779b97f4a7c15ull;
        return std::size_t(h ^ (h >> 32));
    }
};

class OrderCandidates {
  public:
    using Order = std::array<std::uint8_t, kMaxDims>;
    // Per level: its candidate temporal orders where it has several, else
    // null (the mapping holds its one); orders sharing their innermost real
    // loops side by side (sorted by those, innermost first). The lists live
    // as long as this.
    using Lists = std::array<const std::vector<Order>*, kMaxLevels>;

    // With a rule off, its orders are all visited (for the rule's tests).
    OrderCandidates(const MapSpace& space, bool temporalRule, bool spatialRule);

    // Calls visit(m) for each candidate ordering of tiling; returns false as
    // soon as visit does.
    bool forEach(const Mapping& tiling, const std::function<bool(const Mapping&)>& visit);
    // The same candidates as plans: per combination of the spatial orders
    // tried, plan(m, lists) with m holding those spatial orders and every
    // temporal order that has no alternative; the candidates are m with each
    // listed level given one of its list, every combination. (The optimal
    // searcher walks them as a tree, outer levels first.)
    bool forEachPlan(const Mapping& tiling,
                     const std::function<bool(const Mapping&, const Lists&)>& plan);

    struct Stats {
        std::int64_t tilings = 0;
        std::int64_t candidates = 0; // mappings handed to visit
        double orders = 0.0;         // every ordering of those tilings
        std::int64_t levelsBySignature = 0;
        std::int64_t levelsInFull = 0; // a level's temporal orders all tried
        std::int64_t spatialInFull = 0;
    };
    const Stats& stats() const { return stats_; }

  private:
    const std::vector<Order>& temporalAll(int level, std::uint32_t real);
    const std::vector<Order>& temporalBySignature(int level, std::uint32_t real,
                                                  std::uint8_t tensors);
    const std::vector<Order>& spatialAll(int level, std::uint32_t x, std::uint32_t y);
    // Level's neighbour translations in any spatial order, kept by what they
    // depend on (its spatial factors and their strides): tilings repeat them.
    const AnyOrderTranslations& anyOrderTranslations(const Mapping& m, int level);
    // Each level's candidate temporal orders for m's spatial orders (levels
    // with one get it in m).
    void prepareTemporal(Mapping& m, Lists& lists);
    bool visitTemporal(Mapping& m, const Lists& lists, int level,
                       const std::function<bool(const Mapping&)>& visit);

    const MapSpace& space_;
    bool temporalRule_, spatialRule_;
    std::map<std::pair<int, std::uint32_t>, std::vector<Order>> all_;
    std::map<std::tuple<int, std::uint32_t, std::uint8_t>, std::vector<Order>> bySignature_;
    std::map<std::tuple<int, std::uint32_t, std::uint32_t>, std::vector<Order>> spatial_;
    model_detail::Terms terms_;
    std::unordered_map<FanoutKey, AnyOrderTranslations, FanoutKeyHash> translations_;
    Stats stats_;
};

} // namespace mw
