// Compound component classes, as users declare them for Accelergy (the
// exercises' _components/*.yaml: intmac from an adder and a multiplier,
// smartbuffer_SRAM from an SRAM and address adders, regfile from registers and
// comparators) and as Accelergy prices them: a class's attributes take the
// component's values or their defaults (expressions over the others), each
// subcomponent is priced (a class again, or one of Accelergy's primitives,
// Estimator::primitive) with its attributes evaluated in the class's scope,
// and an action costs what its subcomponents' actions cost, times the
// instances it names (storage[1..width]) and its energy_scale; the area is the
// subcomponents' areas times their counts and area_scale. The result is what
// an ERT and an ART would say, so the reader takes it as it takes theirs.
#include "estimate/estimator.h"
#include "io/timeloop/expression.h"
#include "io/timeloop/node_arena.h"
#include "io/timeloop/yaml.h"

#include <cmath>
#include <limits>

namespace mw::timeloop_read {

namespace {

using namespace timeloop_yaml;

constexpr int kMaxNesting = 16;

// "storage[1..width*depth]" -> ("storage", width * depth); "adder[0]" -> 1.
std::pair<std::string, double> rangeOf(const std::string& name, const AttributeScope& scope,
                                       const std::string& where) {
    const auto open = name.find('[');
    if (open == std::string::npos)
        return {name, 1.0};
    const auto close = name.rfind(']');
    if (close == std::string::npos || close < open)
        throw InputError(where, "'" + name + "': expected name[first..last]");
    const std::string inside = name.substr(open + 1, close - open - 1);
    const auto dots = inside.find("..");
    double lo = 0, hi = 0;
    std::string why;
    const bool ok = dots == std::string::npos
                        ? evaluateExpression(inside, scope, lo, why) && (hi = lo, true)
                        : evaluateExpression(inside.substr(0, dots), scope, lo, why) &&
                              evaluateExpression(inside.substr(dots + 2), scope, hi, why);
    if (!ok || hi < lo || hi - lo > 1e9)
        throw InputError(where, "the range of '" + name + "' " +
                                    (why.empty() ? "is empty" : "(" + why + ")") +
                                    "; expected [first..last] with first <= last");
    return {name.substr(0, open), std::floor(hi) - std::floor(lo) + 1};
}

class ClassLibrary {
  public:
    ClassLibrary(const YAML::Node& classes, const std::string& file, const Estimator& est)
        : file_(file), est_(est) {
        if (!classes.IsDefined() || !classes.IsSequence())
            return;
        for (const auto& c : classes)
            if (c.IsMap() && given(child(c, "name")) && child(c, "name").IsScalar())
                classes_[child(c, "name").Scalar()] = YAML::Node(c);
    }

    bool empty() const { return classes_.empty(); }
    bool defines(const std::string& cls) const { return classes_.count(cls) > 0; }

    // The component of class `cls` with these attributes (already evaluated:
    // the node's own and what it inherits), at its process node.
    PrimitiveEstimate price(const std::string& cls, const AttributeScope& attributes, double nm,
                            const std::string& where, int depth = 0) const {
        if (depth > kMaxNesting)
            throw InputError(where, "compound classes nest more than " +
                                        std::to_string(kMaxNesting) +
                                        " deep; expected no class that contains itself");
        PrimitiveEstimate out;
        const auto it = classes_.find(cls);
        if (it == classes_.end()) {
            auto attr = [&](const char* name) {
                const YAML::Node v = attributes.find(name);
                double x = 0;
                std::string why;
                if (v.IsDefined() && v.IsScalar() &&
                    evaluateExpression(v.Scalar(), attributes, x, why))
                    return x;
                return std::numeric_limits<double>::quiet_NaN();
            };
            const YAML::Node type = attributes.find("type");
            const std::string dram =
                type.IsDefined() && type.IsScalar() ? type.Scalar() : std::string("LPDDR4");
            if (!est_.primitive(cls, attr, dram, nm, out, where))
                throw InputError(where + ".class",
                                 "'" + cls + "' is neither a compound class of " + file_ +
                                     " nor a primitive the estimator prices (aladdin_adder, "
                                     "intadder, aladdin_multiplier, aladdin_register, "
                                     "aladdin_comparator, SRAM, DRAM)");
            return out;
        }
        const YAML::Node& def = it->second;
        const std::string cw = file_ + ": class '" + cls + "'";
        // The class's attributes: the component's value, else the default.
        AttributeScope scope = attributes;
        YAML::Node defaults = arena_.make(YAML::NodeType::Map);
        const YAML::Node attrs = child(def, "attributes");
        if (given(attrs) && attrs.IsMap())
            for (const auto& kv : attrs) {
                const std::string key = kv.first.Scalar();
                if (attributes.find(key).IsDefined())
                    continue;
                // Left out where the class says the user must give it: an
                // expression that needs it does not evaluate (Accelergy's
                // variables fill such values as global_cycle_seconds in,
                // which price nothing here).
                if (!(kv.second.IsScalar() && kv.second.Scalar() == "must_specify"))
                    defaults[key] = kv.second;
            }
        scope.push(defaults, cw + ".attributes");

        // Subcomponents, each priced once.
        struct Sub {
            double count = 1, areaScale = 1;
            PrimitiveEstimate price;
        };
        std::map<std::string, Sub> subs;
        const YAML::Node subcomponents = child(def, "subcomponents");
        if (given(subcomponents) && subcomponents.IsSequence())
            for (const auto& s : subcomponents) {
                const std::string sw = cw + ".subcomponents";
                const std::string full = text(child(s, "name"), sw + ".name");
                const auto [base, count] = rangeOf(full, scope, sw + "." + full);
                AttributeScope inner;
                // The technology passes down unless the subcomponent says otherwise.
                YAML::Node passed = arena_.make(YAML::NodeType::Map);
                if (scope.find("technology").IsDefined())
                    passed["technology"] = scope.find("technology");
                inner.push(passed, sw);
                AttributeScope evaluated = scope;
                evaluated.push(child(s, "attributes"), sw + "." + base + ".attributes");
                inner.push(evaluated.innermost(arena_), sw + "." + base + ".attributes");
                Sub sub;
                sub.count = count;
                const YAML::Node scale = child(s, "area_scale");
                if (given(scale))
                    sub.areaScale = evaluateNumber(scale, scope, sw + "." + base + ".area_scale");
                sub.price = price(text(child(s, "class"), sw + "." + base + ".class"), inner, nm,
                                  where + " (" + cls + "." + base + ")", depth + 1);
                out.area += sub.count * sub.areaScale * sub.price.area;
                subs[base] = std::move(sub);
            }
        const YAML::Node actions = child(def, "actions");
        if (given(actions) && actions.IsSequence())
            for (const auto& a : actions) {
                const std::string an = text(child(a, "name"), cw + ".actions.name");
                double energy = 0;
                const YAML::Node refs = child(a, "subcomponents");
                if (given(refs) && refs.IsSequence())
                    for (const auto& r : refs) {
                        const std::string rw = cw + ".actions." + an;
                        const std::string full = text(child(r, "name"), rw + ".name");
                        const auto [base, count] = rangeOf(full, scope, rw + "." + full);
                        const auto sub = subs.find(base);
                        if (sub == subs.end())
                            throw InputError(rw, "names '" + base +
                                                     "', which is not a subcomponent of the class");
                        const YAML::Node subActions = child(r, "actions");
                        if (!given(subActions) || !subActions.IsSequence())
                            continue;
                        for (const auto& sa : subActions) {
                            const std::string san = text(child(sa, "name"), rw + ".actions.name");
                            double scale = 1;
                            if (given(child(sa, "energy_scale")))
                                scale = evaluateNumber(child(sa, "energy_scale"), scope,
                                                       rw + "." + san + ".energy_scale");
                            const auto e = sub->second.price.energy.find(san);
                            // An action a primitive does not have costs nothing (Accelergy's
                            // library plug-in: a register's write, a DRAM's leak).
                            if (e != sub->second.price.energy.end())
                                energy += count * scale * e->second;
                        }
                    }
                out.energy[an] = energy;
            }
        out.basis = "compound class " + cls;
        return out;
    }

  private:
    std::map<std::string, YAML::Node> classes_;
    std::string file_;
    const Estimator& est_;
    // (Where the maps pricing builds are made: memory, not state.)
    mutable timeloop_yaml::NodeArena arena_;
};

} // namespace

PricedComponents priceFromClasses(const Spec& spec, const std::vector<ComponentToPrice>& components,
                                  std::vector<std::string>& notes) {
    PricedComponents out;
    const Spec::Entry* entry = spec.find({"components", "compound_components"});
    if (!entry)
        return out;
    const YAML::Node section = expandEntry(*entry);
    const YAML::Node classes = child(section, "classes");
    const ClassLibrary library(classes, entry->file, Estimator::builtIn());
    if (library.empty())
        return out;
    std::string priced;
    for (const ComponentToPrice& c : components) {
        // A component is priced by its class's definition, or, for a
        // primitive Accelergy class given directly (aladdin_register as a
        // subclass), as the primitive.
        if (!(c.nm > 0))
            continue;
        PrimitiveEstimate e;
        const bool compound = library.defines(c.cls);
        if (!compound) {
            const std::string lc = lowercase(c.cls);
            if (lc.rfind("aladdin_", 0) != 0 && lc != "intadder" && lc != "intmultiplier")
                continue; // the built-in estimator prices it by its class
        }
        try {
            e = library.price(c.cls, c.attributes, c.nm, c.where);
        } catch (const InputError& error) {
            // A class we cannot price (a primitive of another plug-in, an
            // expression beyond ours) leaves the component to the estimator.
            notes.push_back(c.name + " is not priced from its class " + c.cls + " (" +
                            error.what() + "): the estimator prices it by class name");
            continue;
        }
        out.energy[c.name] = e.energy;
        out.area[c.name] = e.area;
        priced += (priced.empty() ? "" : ", ") + c.name + " (" + c.cls + ")";
    }
    if (!priced.empty())
        notes.push_back("priced from the compound component classes of " + entry->file +
                        ", as Accelergy prices them: " + priced);
    return out;
}

} // namespace mw::timeloop_read
