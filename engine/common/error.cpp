#include "common/error.h"

#include <algorithm>

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

std::string nearestName(const std::string& key, const std::vector<std::string>& names) {
    std::string best;
    std::size_t bestDistance = 3;
    for (const std::string& n : names) {
        // Edit distance, one row at a time.
        std::vector<std::size_t> row(n.size() + 1);
        for (std::size_t j = 0; j <= n.size(); ++j)
            row[j] = j;
        for (std::size_t i = 1; i <= key.size(); ++i) {
            std::size_t diagonal = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= n.size(); ++j) {
                const std::size_t above = row[j];
                row[j] = std::min(
                    {row[j] + 1, row[j - 1] + 1, diagonal + (key[i - 1] == n[j - 1] ? 0 : 1)});
                diagonal = above;
            }
        }
        if (row[n.size()] < bestDistance) {
            bestDistance = row[n.size()];
            best = n;
        }
    }
    return best;
}

std::string didYouMean(const std::string& key, const std::vector<std::string>& names) {
    const std::string near = nearestName(key, names);
    return near.empty() ? std::string() : " (did you mean '" + near + "'?)";
}

} // namespace mw
