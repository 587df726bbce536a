// SearchObjective (search.h): what a search minimizes, and its command-line
// spelling.
#include "common/error.h"
#include "common/number_text.h"
#include "model/evaluation.h"
#include "search/search.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace mw {

double SearchObjective::value(const Evaluation& e) const {
    if (energyExponent == 1.0 && cycleExponent == 1.0)
        return e.edp; // (as the model rounded it)
    return value(e.energy, double(e.cycles));
}

double SearchObjective::value(double energy, double cycles) const {
    if (energyExponent == 1.0 && cycleExponent == 1.0)
        return energy * 1e-12 * cycles;
    return std::pow(energy * 1e-12, energyExponent) * std::pow(std::floor(cycles), cycleExponent);
}

std::string SearchObjective::name() const {
    std::string base;
    if (energyExponent == 1.0 && cycleExponent == 1.0)
        base = "edp";
    else if (energyExponent == 1.0 && cycleExponent == 0.0)
        base = "energy";
    else if (energyExponent == 0.0 && cycleExponent == 1.0)
        base = "cycles";
    else
        base = "weighted:" + std::to_string(energyExponent) + "," + std::to_string(cycleExponent);
    if (densityTensor.empty())
        return base;
    std::ostringstream o;
    o << base << '@' << densityTensor << '=';
    for (std::size_t i = 0; i < densities.size(); ++i)
        o << (i ? "," : "") << densities[i];
    return o.str();
}

SearchObjective SearchObjective::parse(const std::string& full) {
    const auto at = full.find('@');
    if (at != std::string::npos) {
        SearchObjective o = parse(full.substr(0, at));
        const std::string spec = full.substr(at + 1);
        const auto eq = spec.find('=');
        o.densityTensor = spec.substr(0, eq);
        if (o.densityTensor.empty())
            throw InputError("--objective", "'" + full + "': expected a tensor name after @");
        o.densities = {1.0, 0.8, 0.5, 0.2, 0.1}; // the map-space study's five
        if (eq != std::string::npos) {
            o.densities.clear();
            std::stringstream ss(spec.substr(eq + 1));
            std::string item;
            while (std::getline(ss, item, ',')) {
                // (stod alone read "0.5x" as 0.5.)
                const double d = decimalNumber(item).value_or(-1.0);
                if (!(d > 0 && d <= 1))
                    throw InputError("--objective", "density '" + item + "' must be in (0, 1]");
                o.densities.push_back(d);
            }
            if (o.densities.empty())
                throw InputError("--objective", "'" + full + "': no densities after =");
        }
        return o;
    }
    const std::string& text = full;
    SearchObjective o;
    if (text == "edp")
        return o;
    if (text == "energy") {
        o.cycleExponent = 0.0;
        return o;
    }
    if (text == "cycles" || text == "delay") {
        o.energyExponent = 0.0;
        return o;
    }
    if (text.rfind("weighted:", 0) == 0) {
        const std::string rest = text.substr(9);
        const auto comma = rest.find(',');
        // Each read to its end: stod alone read "2,3" as 2, and weighted:1,2,3
        // passed as weighted:1,2.
        const std::optional<double> energy =
            comma == std::string::npos ? std::nullopt : decimalNumber(rest.substr(0, comma));
        const std::optional<double> cycles =
            comma == std::string::npos ? std::nullopt : decimalNumber(rest.substr(comma + 1));
        if (!energy || !cycles)
            throw InputError("--objective", "'" + text + "': expected weighted:A,B with numbers");
        o.energyExponent = *energy;
        o.cycleExponent = *cycles;
        // (Negated tests: a NaN exponent fails them too.)
        if (!(o.energyExponent >= 0 && o.cycleExponent >= 0 && o.energyExponent <= 100 &&
              o.cycleExponent <= 100) ||
            o.energyExponent + o.cycleExponent == 0)
            throw InputError("--objective",
                             "'" + text + "': expected exponents from 0 to 100, not both 0");
        return o;
    }
    throw InputError("--objective",
                     "is '" + text + "'; expected edp, energy, cycles or weighted:A,B");
}

} // namespace mw
