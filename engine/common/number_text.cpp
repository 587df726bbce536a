#include "common/number_text.h"

#include <cmath>
#include <stdexcept>

namespace mw {

std::optional<double> decimalNumber(const std::string& text) {
    if (text.empty() || text.find_first_not_of("0123456789+-.eE") != std::string::npos)
        return std::nullopt;
    try {
        std::size_t used = 0;
        const double v = std::stod(text, &used);
        if (used != text.size() || !std::isfinite(v))
            return std::nullopt;
        return v;
    } catch (const std::exception&) { // (none, or out of a double's range)
        return std::nullopt;
    }
}

} // namespace mw
