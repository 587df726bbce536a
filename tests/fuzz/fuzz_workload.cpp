// Workload (network) JSON: read, each layer's problem built (the first few),
// the network written back and read again to the same file.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::expectInputErrors([&] {
        const mw::Network n = mw::networkFromJson(fuzz::json(data, size));
        const mw::Json written = mw::toJson(n);
        if (mw::toJson(mw::networkFromJson(written)) != written)
            __builtin_trap();
        for (std::size_t i = 0; i < n.layers.size() && i < 4; ++i)
            fuzz::expectInputErrors([&] { mw::buildProblem(n.layers[i]); });
    });
    return 0;
}
