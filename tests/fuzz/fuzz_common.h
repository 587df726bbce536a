#pragma once
// What every harness holds of its input format: bad input is answered with an
// InputError (the one-line error the user sees, naming file and field);
// anything else that escapes (another exception, a crash, a sanitizer report,
// a hang) is a finding. Inputs that parse go on through the code that uses
// them: round trips, the cost model, the map space.
#include "arch/architecture.h"
#include "common/error.h"
#include "io/json_io.h"
#include "workload/presets.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#ifndef MAPWRIGHT_SOURCE_DIR
#define MAPWRIGHT_SOURCE_DIR "."
#endif

namespace fuzz {

inline std::string text(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs f; an InputError is the expected answer to bad input.
template <typename F> void expectInputErrors(F&& f) {
    try {
        f();
    } catch (const mw::InputError& e) {
        // The message is one line: the CLI and GUI show it as such.
        if (std::string(e.what()).find('\n') != std::string::npos) {
            std::fprintf(stderr, "an error of more than one line: %s\n", e.what());
            __builtin_trap();
        }
    }
}

// The JSON text as the file readers see it.
inline mw::Json json(const std::uint8_t* data, std::size_t size) {
    return mw::parseJsonText(text(data, size), "fuzz.json");
}

inline std::string sample(const std::string& relative) {
    return std::string(MAPWRIGHT_SOURCE_DIR) + "/samples/" + relative;
}

// A small layer whose every dimension has a few factors, for harnesses that
// need a problem to read against.
inline mw::Problem smallConv() {
    return mw::buildProblem(mw::presetLayer("conv2d", "fuzz_conv"));
}

} // namespace fuzz
