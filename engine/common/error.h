#pragma once
// One error type for all bad input: it names where (file, JSON path or YAML
// line, field) and what was expected, so every front end can print one line.
#include <stdexcept>
#include <string>
#include <vector>

namespace mw {

class InputError : public std::runtime_error {
  public:
    InputError(std::string where, std::string what);
    const std::string& where() const { return where_; }
    const std::string& detail() const { return detail_; }

    // A copy of this error located inside `outer` (e.g. a file name).
    InputError within(const std::string& outer) const;

  private:
    std::string where_;
    std::string detail_;
};

// The name among `names` a misspelt `key` probably meant (at most two letters
// differ), or "" (for "did you mean ...?").
std::string nearestName(const std::string& key, const std::vector<std::string>& names);
// " (did you mean 'x'?)" with x = nearestName(key, names), or "" when none.
std::string didYouMean(const std::string& key, const std::vector<std::string>& names);

} // namespace mw
