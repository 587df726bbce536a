#include "common/error.h"

namespace mw {

namespace {
std::string compose(const std::string& where, const std::string& what) {
    return where.empty() ? what : where + ": " + what;
}
} // namespace

InputError::InputError(std::string where, std::string what)
    : std::runtime_error(compose(where, what)), where_(std::move(where)), detail_(std::move(what)) {
}

InputError InputError::within(const std::string& outer) const {
    if (outer.empty())
        return *this;
    return InputError(where_.empty() ? outer : outer + ": " + where_, detail_);
}

} // namespace mw
