#include "common/error.h"

namespace mw {

namespace {
std::string compose(const std::string& where, const std::string& what) {
    return where.empty() ? what : where + ": " + what;
}

// Input quoted into a message (a name, a YAML scalar) may hold line breaks
// or other control characters; escaped, the message stays one line.
std::string oneLine(std::string s) {
    std::string out;
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else if (c == '\t')
            out += "\\t";
        else if (u < 0x20 || u == 0x7f)
            out += "\\x" + std::string(1, "0123456789abcdef"[u >> 4]) + "0123456789abcdef"[u & 15];
        else
            out += c;
    }
    return out;
}
} // namespace

InputError::InputError(std::string where, std::string what)
    : std::runtime_error(compose(oneLine(where), oneLine(what))), where_(oneLine(std::move(where))),
      detail_(oneLine(std::move(what))) {}

InputError InputError::within(const std::string& outer) const {
    if (outer.empty())
        return *this;
    return InputError(where_.empty() ? outer : outer + ": " + where_, detail_);
}

} // namespace mw
