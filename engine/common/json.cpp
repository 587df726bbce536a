#include "common/json.h"

#include "common/error.h"

#include <set>
#include <vector>

namespace mw {

Json parseJsonText(const std::string& text, const std::string& path) {
    // A key given twice in one object: JSON readers differ on which holds
    // (ours kept the last, so "M": 16, ..., "M": 4 ran with 4), so it is refused.
    std::vector<std::set<std::string>> keysOfOpenObjects;
    const Json::parser_callback_t noRepeatedKeys = [&](int, Json::parse_event_t event,
                                                       Json& parsed) {
        if (event == Json::parse_event_t::object_start) {
            keysOfOpenObjects.emplace_back();
        } else if (event == Json::parse_event_t::object_end) {
            keysOfOpenObjects.pop_back();
        } else if (event == Json::parse_event_t::key && !keysOfOpenObjects.empty()) {
            const std::string& key = parsed.get_ref<const std::string&>();
            if (!keysOfOpenObjects.back().insert(key).second)
                throw InputError(path, "has the key '" + key +
                                           "' twice in one object; expected each key once");
        }
        return true;
    };
    try {
        return Json::parse(text, noRepeatedKeys);
    } catch (const Json::parse_error& e) {
        // Turn the byte offset into a line and column for people.
        std::size_t line = 1, col = 1;
        for (std::size_t i = 0; i < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        std::string what = e.what();
        const auto pos = what.find("parse error");
        throw InputError(path + ":" + std::to_string(line) + ":" + std::to_string(col),
                         "malformed JSON (" + (pos == std::string::npos ? what : what.substr(pos)) +
                             ")");
    } catch (const Json::exception& e) {
        // The parser's other complaint: a number beyond a double's range.
        std::string what = e.what();
        const auto pos = what.find(']');
        throw InputError(path, "malformed JSON (" +
                                   (pos == std::string::npos ? what : what.substr(pos + 2)) + ")");
    }
}

} // namespace mw
