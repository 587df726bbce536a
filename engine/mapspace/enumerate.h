#pragma once
// Every mapping of a map space, once each (in canonical form): each
// dimension's free primes over its slots (one axis per level and dimension),
// every free keep choice, and every order of the real loops a constraint
// leaves free, temporal and spatial. Legality is the caller's to check.
#include "mapspace/mapspace.h"

#include <cstdint>
#include <functional>

namespace mw {

struct EnumerationOptions {
    // Orders of the innermost temporal level: they change no count (Timeloop's
    // mapper tries one), but they are distinct mappings of the space.
    bool innermostOrders = true;
    bool spatialOrders = true;
};

// Calls visit(m) for each mapping until it returns false; returns how many
// were visited.
std::int64_t enumerateMappings(const MapSpace& space, const EnumerationOptions& options,
                               const std::function<bool(const Mapping&)>& visit);

// All distinct ways to spread dimension d's free primes over its slots, never
// onto both axes of one level: one factor per slot (the order of factorSlots(d)).
std::vector<std::vector<std::uint32_t>> slotAllocations(const MapSpace& space, int d);

} // namespace mw
