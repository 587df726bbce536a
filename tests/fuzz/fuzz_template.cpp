// The template path after rendering: a rendered top file whose include() and
// include_all() are tagged nodes (!mapwright-include {file, key}), and the
// rendered files they name, as the helper mapwright-jinja returns them
// (engine/io/timeloop/template.h). The first part is the top file; each
// further part, after "#FILE PATH", is the rendered file PATH. Includes that
// are missing, loop, name absent keys or hold merges are all fuzzed here, in
// process; rendering itself is Jinja2's (sandboxed), run by the helper.
#include "fuzz_timeloop_case.h"

#include <map>
#include <memory>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto parts = fuzz::splitFiles(fuzz::text(data, size));
    auto included = std::make_shared<std::map<std::string, std::string>>();
    for (std::size_t i = 1; i < parts.size(); ++i)
        (*included)[parts[i].first] = parts[i].second;
    fuzz::importTimeloopCase({{"top.yaml.jinja2", parts.front().second, included}});
    return 0;
}
