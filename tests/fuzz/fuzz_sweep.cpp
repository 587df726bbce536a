// Sweep files (mapwright.sweep) with the architecture and workload embedded or
// named: read, checked (every parameter and value on the base design), planned,
// and the first points' architectures built and estimated (searching them is
// the search harnesses' business).
#include "fuzz_common.h"

#include "explore/design_space.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::expectInputErrors([&] {
        const mw::SweepSpec spec =
            mw::sweepSpecFromJson(fuzz::json(data, size), "fuzz", MAPWRIGHT_SOURCE_DIR);
        mw::checkSweep(spec);
        const auto points = mw::planSweep(spec);
        for (std::size_t i = 0; i < points.size() && i < 4; ++i) {
            try {
                mw::pointArchitecture(spec, points[i]);
            } catch (const mw::InputError&) {
                // a combination that is not a design: recorded as such by a sweep
            }
        }
    });
    return 0;
}
