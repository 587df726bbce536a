#pragma once
// The JSON value every Mapwright file is read into and written from
// (nlohmann's, keeping the order of an object's keys as written).
#include <nlohmann/json.hpp>

#include <string>

namespace mw {

using Json = nlohmann::ordered_json;

// JSON text parsed; malformed text is an InputError naming `where`, line and column.
Json parseJsonText(const std::string& text, const std::string& where);

} // namespace mw
