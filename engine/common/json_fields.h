#pragma once
// Reading fields of Mapwright's JSON files: every value is type- and
// range-checked before use, so bad input is an InputError naming the JSON
// path and what was expected, never a library exception or an undefined
// conversion (a double outside an integer's range). Shared by every reader of
// the engine's JSON (files, the estimator's data).
#include "common/error.h"
#include "common/json.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace mw::json_fields {

inline std::string typeName(const Json& j) {
    return j.is_null() ? "null" : std::string(j.type_name());
}

// Refuses a key of object j that is not among `known`: a misspelt key would
// otherwise be dropped in silence (a constraint's "kep"), so the error names
// the key it probably meant.
inline void onlyKeys(const Json& j, const std::string& path,
                     std::initializer_list<const char*> known) {
    if (!j.is_object())
        return;
    for (const auto& item : j.items()) {
        bool found = false;
        for (const char* k : known)
            found = found || item.key() == k;
        if (found)
            continue;
        const std::vector<std::string> names(known.begin(), known.end());
        std::string all;
        for (const std::string& n : names)
            all += (all.empty() ? "" : ", ") + n;
        throw InputError(path + "." + item.key(), "is not a field here" +
                                                      didYouMean(item.key(), names) +
                                                      "; expected one of " + all);
    }
}

inline const Json& member(const Json& j, const char* key, const std::string& path) {
    if (!j.is_object())
        throw InputError(path, "expected an object, got " + typeName(j));
    auto it = j.find(key);
    if (it == j.end())
        throw InputError(path, std::string("missing field '") + key + "'");
    return *it;
}

// v as T: bool, std::string, double or an integer type (a whole number within
// T's range; 3.0 counts as 3).
template <typename T> T as(const Json& v, const std::string& path) {
    if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean())
            throw InputError(path, "expected true or false, got " + typeName(v));
        return v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string())
            throw InputError(path, "expected a string, got " + typeName(v));
        return v.get<std::string>();
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number())
            throw InputError(path, "expected a number, got " + typeName(v));
        return v.get<T>();
    } else {
        static_assert(std::is_integral_v<T>);
        using Limits = std::numeric_limits<T>;
        if (v.is_number_unsigned() && v.get<std::uint64_t>() <= std::uint64_t(Limits::max()))
            return static_cast<T>(v.get<std::uint64_t>());
        if (v.is_number_integer() && !v.is_number_unsigned()) {
            const std::int64_t i = v.get<std::int64_t>();
            if ((!Limits::is_signed && i >= 0 &&
                 std::uint64_t(i) <= std::uint64_t(Limits::max())) ||
                (Limits::is_signed && i >= std::int64_t(Limits::min()) &&
                 i <= std::int64_t(Limits::max())))
                return static_cast<T>(i);
        }
        if (v.is_number_float()) {
            // Compared as doubles before converting: outside T, a conversion is undefined.
            const double d = v.get<double>();
            if (d == std::trunc(d) && d >= double(Limits::min()) && d < 0x1p63 &&
                d <= double(Limits::max()))
                return static_cast<T>(d);
        }
        // The range is named only where it is narrower than the file format's integers.
        const std::string range =
            sizeof(T) < sizeof(std::int64_t)
                ? " from " + std::to_string(Limits::min()) + " to " + std::to_string(Limits::max())
                : "";
        throw InputError(path, "expected an integer" + range + ", got " +
                                   (v.is_primitive() ? v.dump() : typeName(v)));
    }
}

// The field key of object j as T; missing: an error.
template <typename T> T required(const Json& j, const char* key, const std::string& path) {
    return as<T>(member(j, key, path), path + "." + key);
}

// The field key of object j as T; missing or null: fallback.
template <typename T>
T optional(const Json& j, const char* key, const std::string& path, const T& fallback) {
    if (!j.is_object() || !j.contains(key) || j.at(key).is_null())
        return fallback;
    return as<T>(j.at(key), path + "." + key);
}

// The array field key of object j.
inline const Json& arrayMember(const Json& j, const char* key, const std::string& path) {
    const Json& v = member(j, key, path);
    if (!v.is_array())
        throw InputError(path + "." + key, "expected an array, got " + typeName(v));
    return v;
}

} // namespace mw::json_fields
