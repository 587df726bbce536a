#pragma once
// Helpers shared by the test programs.
#include "arch/architecture.h"
#include "common/error.h"

#include <string>

namespace mw::test {

// The message of the InputError that f throws, or "<no error>".
template <typename F> std::string errorOf(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "<no error>";
}

// A storage level with uniform per-word energy (read, fill, update) and no leakage.
inline StorageLevel level(const std::string& name, LevelClass cls, std::int64_t capacity,
                          int meshX = 1, int meshY = 1, double energy = 1.0) {
    StorageLevel s;
    s.name = name;
    s.cls = cls;
    s.capacityWords = capacity;
    s.meshX = meshX;
    s.meshY = meshY;
    s.energy = {energy, energy, energy, 0.0};
    return s;
}

} // namespace mw::test
