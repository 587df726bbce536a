// Session JSON (what the GUI saves and autosaves): read, written back and
// read again to the same file.
#include "fuzz_common.h"

#include "io/session_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::expectInputErrors([&] {
        const mw::Session s = mw::sessionFromJson(fuzz::json(data, size), "fuzz.json");
        const mw::Json written = mw::toJson(s);
        if (mw::toJson(mw::sessionFromJson(written, "again.json")) != written)
            __builtin_trap();
    });
    return 0;
}
