#pragma once
// Numbers as users type them in options and values, read one way everywhere.
#include <optional>
#include <string>

namespace mw {

// The finite number `text` spells in decimal (sign, digits, point, exponent),
// or nullopt when it spells none: text beyond the number ("2,3", "0.5x"),
// blanks, hexadecimal ("0x10", which std::stod reads as 16), inf or nan.
std::optional<double> decimalNumber(const std::string& text);

} // namespace mw
