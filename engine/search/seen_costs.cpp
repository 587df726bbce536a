// SeenCosts (search.h): the table of the costs of the mappings a search has
// evaluated, by canonical hash.
#include "search/search.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace mw {

std::uint64_t SeenCosts::filterBits(std::uint64_t key) {
    // Bits of the key that neither home nor filterWord draws on most.
    return (1ull << ((key >> 52) & 63)) | (1ull << ((key >> 58) & 63));
}

SeenCosts::SeenCosts() : olderFilter_(1) {
    grow(1024, {});
}

void SeenCosts::limitBytes(std::size_t bytes) {
    std::size_t slots = kMinCappedSlots;
    while (2 * tableBytes(2 * slots) <= bytes) // (two generations)
        slots *= 2;
    maxSlots_ = slots;
    capBytes_ = std::max(bytes, 2 * tableBytes(slots));
}

bool SeenCosts::lookUp(const ZeroedArray<Slot>& table, const ZeroedArray<std::uint64_t>& filter,
                       std::uint64_t key, double& cost) {
    const std::uint64_t bits = filterBits(key);
    if ((filter[filterWord(key, filter.size())] & bits) != bits)
        return false; // the common answer for a new mapping: no table probe
    const std::size_t mask = table.size() - 1;
    for (std::size_t i = home(key, table.size());; i = (i + 1) & mask) {
        if (table[i].key == key) {
            cost = table[i].cost;
            return true;
        }
        if (table[i].key == 0)
            return false;
    }
}

bool SeenCosts::find(std::uint64_t key, double& cost) const {
    key |= 1; // never 0
    return lookUp(slots_, filter_, key, cost) || lookUp(older_, olderFilter_, key, cost);
}

bool SeenCosts::insert(std::uint64_t key, double cost, double& known) {
    reserve(1);
    key |= 1;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(key, slots_.size());; i = (i + 1) & mask) {
        if (slots_[i].key == key) {
            known = slots_[i].cost;
            return false;
        }
        if (slots_[i].key == 0) {
            // A key of the older generation moves to this one, with its cost.
            const bool old = lookUp(older_, olderFilter_, key, known);
            movedForward_ += old;
            slots_[i] = {key, old ? known : cost};
            filter_[filterWord(key, filter_.size())] |= filterBits(key);
            ++size_;
            return !old;
        }
    }
}

void SeenCosts::reserve(std::size_t more, const ParallelFor& parallelFor) {
    std::size_t slots = slots_.size();
    std::size_t keys = size_ + more;
    if (2 * keys <= slots) // at most half full: short probes
        return;
    while (2 * keys > slots)
        slots *= 2;
    // (A batch larger than the cap allows still gets its room.)
    if (slots > maxSlots_ && 2 * more <= maxSlots_) {
        retire(parallelFor);
        return;
    }
    if (slots_.size() >= kEarlySlots)
        while (2 * std::min(expected_, kExpectedKeysCap) > slots && slots < maxSlots_)
            slots *= 2;
    try {
        grow(slots, parallelFor);
    } catch (const std::bad_alloc&) {
        // The system refused the memory (a limit below the cap): the table
        // it has becomes the cap.
        if (2 * more > slots_.size())
            throw;
        maxSlots_ = slots_.size();
        capBytes_ = 2 * tableBytes(maxSlots_);
        refused_ = true;
        retire(parallelFor);
    }
}

void SeenCosts::retire(const ParallelFor& parallelFor) {
    // The older generation's memory goes first, so that at most two tables are held.
    ++retirements_;
    forgotten_ += olderSize_ - movedForward_; // (the keys moved are held still)
    movedForward_ = 0;
    older_ = {};
    olderFilter_ = ZeroedArray<std::uint64_t>(1);
    older_ = std::move(slots_);
    std::swap(olderFilter_, filter_);
    olderSize_ = size_;
    size_ = 0;
    try {
        grow(maxSlots_, parallelFor); // (places no key: the table is empty)
    } catch (const std::bad_alloc&) {
        // No room for a second table: the one there is starts over.
        capBytes_ = tableBytes(maxSlots_);
        refused_ = true;
        forgotten_ += olderSize_; // (none moved forward yet)
        olderSize_ = 0;
        slots_ = std::move(older_);
        older_ = {};
        filter_ = std::move(olderFilter_);
        olderFilter_ = ZeroedArray<std::uint64_t>(1);
        std::memset(static_cast<void*>(&slots_[0]), 0, slots_.size() * sizeof(Slot));
        std::memset(static_cast<void*>(&filter_[0]), 0, filter_.size() * sizeof(std::uint64_t));
    }
}

void SeenCosts::grow(std::size_t slots, const ParallelFor& parallelFor) {
    // A growth stops the search while it runs (the merge needs the table), so
    // its two costs are shared out: the new table is zeroed in order (its pages
    // faulted in far more cheaply than one at a time by scattered inserts),
    // then every key is placed, claiming its slot atomically (keys are
    // distinct, so only the slot each lands in depends on the threads' timing,
    // and no look-up's answer does).
    if (systemLimit_ > 0 && tableBytes(slots_.size() + older_.size() + slots) > systemLimit_)
        throw std::bad_alloc(); // (a system that refuses, for the tests)
    auto forRanges = [&parallelFor](std::size_t n, const RangeFn& fn) {
        if (parallelFor)
            parallelFor(n, fn);
        else if (n > 0)
            fn(0, n, 0);
    };
    constexpr std::size_t kBlock = 1 << 14; // slots per range
    ZeroedArray<Slot> table(slots, [&](Slot* data, std::size_t n) {
        forRanges((n + kBlock - 1) / kBlock, [&](std::size_t begin, std::size_t end, int) {
            const std::size_t from = begin * kBlock, to = std::min(n, end * kBlock);
            std::memset(static_cast<void*>(data + from), 0, (to - from) * sizeof(Slot));
        });
    });
    ZeroedArray<std::uint64_t> filter(std::max<std::size_t>(1, slots / 16)); // 4 bits per slot
    const std::size_t mask = slots - 1;
    forRanges(slots_.size(), [&](std::size_t begin, std::size_t end, int) {
        for (std::size_t k = begin; k < end; ++k) {
            const Slot s = slots_[k];
            if (s.key == 0)
                continue;
            for (std::size_t i = home(s.key, slots);; i = (i + 1) & mask) {
                std::uint64_t empty = 0;
                if (std::atomic_ref<std::uint64_t>(table[i].key)
                        .compare_exchange_strong(empty, s.key, std::memory_order_relaxed)) {
                    table[i].cost = s.cost;
                    std::atomic_ref<std::uint64_t>(filter[filterWord(s.key, filter.size())])
                        .fetch_or(filterBits(s.key), std::memory_order_relaxed);
                    break;
                }
            }
        }
    });
    slots_ = std::move(table);
    filter_ = std::move(filter);
}

} // namespace mw
