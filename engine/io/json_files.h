#pragma once
// Mapwright's own JSON files, as the readers of engine/io and engine/explore
// take them: the format and version check, and errors located in the file.
// (The field readers below them are common/json_fields.h.)
#include "common/json_fields.h"
#include "io/json_io.h"

#include <string>

namespace mw::json_fields {

// j is an object whose "format" (when present: hand-written files and the
// shared layer-shape files may leave it out) is `expected`, in a version this
// build reads.
inline void checkFormat(const Json& j, const char* expected, const std::string& path) {
    if (!j.is_object())
        throw InputError(path, "expected a JSON object, got " + typeName(j));
    if (!j.contains("format"))
        return;
    const std::string f = required<std::string>(j, "format", path);
    if (f != expected)
        throw InputError(path + ".format", "is '" + f + "'; expected '" + expected + "'");
    if (j.contains("version")) {
        const std::int64_t v = as<std::int64_t>(j.at("version"), path + ".version");
        if (v > kFormatVersion)
            throw InputError(path + ".version", "is " + std::to_string(v) +
                                                    "; this build reads up to version " +
                                                    std::to_string(kFormatVersion));
    }
}

// f(the JSON of file `path`), its errors located in the file.
template <typename F> auto withFile(const std::string& path, F&& f) {
    try {
        return f(readJsonFile(path));
    } catch (const InputError& e) {
        if (e.where().rfind(path, 0) == 0)
            throw;
        throw e.within(path);
    } catch (const Json::exception& e) {
        throw InputError(path, std::string("unexpected JSON value: ") + e.what());
    }
}

} // namespace mw::json_fields
