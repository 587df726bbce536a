#include "common/json.h"

#include "common/error.h"

namespace mw {

Json parseJsonText(const std::string& text, const std::string& path) {
    try {
        return Json::parse(text);
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
