#pragma once
// Names compared without regard to case (Timeloop's class names, DRAM types,
// file extensions): folded to ASCII lower case, one way everywhere.
#include <algorithm>
#include <cctype>
#include <string>

namespace mw {

inline std::string lowercase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

} // namespace mw
