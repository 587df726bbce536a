// Architecture JSON: read, written back and read again to the same file, and
// a trivial mapping of a small layer evaluated on it.
#include "fuzz_common.h"

#include "mapping/mapping.h"
#include "model/cost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const mw::Problem problem = fuzz::smallConv();
    fuzz::expectInputErrors([&] {
        const mw::Architecture a = mw::architectureFromJson(fuzz::json(data, size));
        const mw::Json written = mw::toJson(a);
        if (mw::toJson(mw::architectureFromJson(written)) != written)
            __builtin_trap(); // what we write must read back as itself
        mw::evaluate(problem, a, mw::makeTrivialMapping(problem, a));
    });
    return 0;
}
