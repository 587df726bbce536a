#pragma once
// Expressions in the front end's attributes and variables (depth: 2 * n,
// width: datawidth * block): arithmetic over numbers and the names in scope,
// evaluated here by a small parser, never by running the file's code. A
// plain (unquoted) value that is not a number is read as an expression; one
// that does not evaluate (a name out of scope, a word such as LPDDR4) stays
// the text it is, as a quoted value always does.
#include "io/timeloop/node_arena.h"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mw::timeloop_read {

// Attributes in scope, outermost first: the top-level variables, then each
// container's attributes, then a component's own.
class AttributeScope {
  public:
    // One more map of attributes, each value evaluated in order (a value may
    // use the ones before it and every outer scope). Errors name `where`.
    void push(const YAML::Node& attributes, const std::string& where);
    int depth() const { return static_cast<int>(levels_.size()); }
    // The value of a name, innermost first; a null node when out of scope.
    YAML::Node find(const std::string& name) const;
    // The attributes pushed last, as evaluated, in a map made in `arena`.
    YAML::Node innermost(timeloop_yaml::NodeArena& arena) const;
    // Every attribute, inner ones winning, where keep(key, depth) holds, in
    // a map made in `arena`.
    YAML::Node flattened(const std::function<bool(const std::string&, int)>& keep,
                         timeloop_yaml::NodeArena& arena) const;

  private:
    std::vector<std::vector<std::pair<std::string, YAML::Node>>> levels_;
};

// The expression's value, or false with why in `error`.
bool evaluateExpression(const std::string& text, const AttributeScope& scope, double& out,
                        std::string& error);

// A scalar's number: itself, or its expression evaluated; an InputError
// naming `where` otherwise.
double evaluateNumber(const YAML::Node& value, const AttributeScope& scope,
                      const std::string& where);

} // namespace mw::timeloop_read
