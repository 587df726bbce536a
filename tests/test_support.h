#pragma once
// Helpers shared by the test programs.
#include "arch/architecture.h"
#include "common/error.h"
#include "workload/presets.h"

#include <string>

namespace mw::test {

// Builds instrumented with AddressSanitizer or ThreadSanitizer, which run
// the engine several- to thirtyfold slower (GCC defines these macros).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderThreadSanitizer = true;
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif

// A message holds `part` and is one line, as every error and note must be
// (QtTest's QVERIFY2: include <QtTest> before use).
#define EXPECT_CONTAINS(text, part)                                                                \
    do {                                                                                           \
        const std::string t_ = (text);                                                             \
        QVERIFY2(t_.find(part) != std::string::npos,                                               \
                 qPrintable(QString::fromStdString("'" + t_ + "' lacks '" + (part) + "'")));       \
        QVERIFY2(t_.find('\n') == std::string::npos, qPrintable(QString::fromStdString(t_)));      \
    } while (0)

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

// Two 14 x 14 conv layers (C = 32 and 64, M = 64, 3 x 3) and a repeat of the
// first: a network small enough for sweeps in tests, with a repeated layer.
inline Network twoConvs() {
    Network n;
    n.name = "two-convs";
    LayerSpec a = presetLayer("conv2d", "conv_a");
    for (auto& [k, v] : a.params)
        v = k == "C"               ? 32
            : k == "M"             ? 64
            : k == "P" || k == "Q" ? 14
            : k == "R" || k == "S" ? 3
                                   : v;
    LayerSpec b = a;
    b.name = "conv_b";
    for (auto& [k, v] : b.params)
        v = k == "C" ? 64 : v;
    LayerSpec c = a;
    c.name = "conv_c";
    n.layers = {a, b, c};
    return n;
}

} // namespace mw::test
