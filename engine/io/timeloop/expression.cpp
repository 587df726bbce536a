#include "io/timeloop/expression.h"

#include "common/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace mw::timeloop_read {

namespace {

bool numberText(const std::string& s, double& out) {
    if (s.empty())
        return false;
    std::istringstream in(s);
    in.imbue(std::locale::classic());
    in >> out;
    return in && in.peek() == std::char_traits<char>::eof();
}

// Recursive descent over the part of Python the front end's files use,
// lowest precedence first: `a if c else b`, or, and, not, comparisons,
// + -, * / // %, unary -, ** (right-associative), then atoms (numbers, names,
// calls of the math functions, parentheses). Truth is 1 and 0.
class Parser {
  public:
    Parser(const std::string& text, const AttributeScope& scope, int depth)
        : s_(text), scope_(scope), depth_(depth) {}

    double parse() {
        const double v = conditional();
        skip();
        if (i_ != s_.size())
            fail("unexpected '" + s_.substr(i_, 1) + "'");
        return v;
    }

  private:
    const std::string& s_;
    const AttributeScope& scope_;
    int depth_;
    std::size_t i_ = 0;
    int nest_ = 0;

    [[noreturn]] static void fail(const std::string& why) { throw std::runtime_error(why); }

    // Nesting past this is no attribute anyone writes: refused, not recursed.
    struct Nest {
        int& n;
        explicit Nest(int& nest) : n(nest) {
            if (++n > 200)
                fail("nests too deeply");
        }
        ~Nest() { --n; }
    };

    void skip() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
            ++i_;
    }
    bool eat(const char* op) {
        skip();
        const std::string o(op);
        if (s_.compare(i_, o.size(), o) != 0)
            return false;
        // "*" is not the start of "**", "/" not of "//", "<" not of "<=".
        if ((o == "*" || o == "/") && i_ + 1 < s_.size() && s_[i_ + 1] == o[0])
            return false;
        if ((o == "<" || o == ">") && i_ + 1 < s_.size() && s_[i_ + 1] == '=')
            return false;
        i_ += o.size();
        return true;
    }
    // A keyword as a whole word.
    bool word(const char* w) {
        skip();
        const std::string k(w);
        if (s_.compare(i_, k.size(), k) != 0)
            return false;
        const std::size_t end = i_ + k.size();
        if (end < s_.size() &&
            (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_'))
            return false;
        i_ = end;
        return true;
    }

    double conditional() {
        Nest nest(nest_);
        const double v = either();
        const std::size_t mark = i_;
        if (!word("if")) {
            i_ = mark;
            return v;
        }
        const double condition = either();
        if (!word("else"))
            fail("expected 'else' after 'if'");
        const double otherwise = conditional();
        return condition != 0 ? v : otherwise;
    }
    double either() {
        double v = both();
        while (word("or")) {
            const double w = both();
            v = (v != 0 || w != 0) ? 1 : 0;
        }
        return v;
    }
    double both() {
        double v = negation();
        while (word("and")) {
            const double w = negation();
            v = (v != 0 && w != 0) ? 1 : 0;
        }
        return v;
    }
    double negation() {
        Nest nest(nest_);
        if (word("not"))
            return negation() == 0 ? 1 : 0;
        return comparison();
    }
    double comparison() {
        const double v = sum();
        if (eat("<="))
            return v <= sum() ? 1 : 0;
        if (eat(">="))
            return v >= sum() ? 1 : 0;
        if (eat("=="))
            return v == sum() ? 1 : 0;
        if (eat("!="))
            return v != sum() ? 1 : 0;
        if (eat("<"))
            return v < sum() ? 1 : 0;
        if (eat(">"))
            return v > sum() ? 1 : 0;
        return v;
    }
    double sum() {
        double v = product();
        for (;;) {
            if (eat("+"))
                v += product();
            else if (eat("-"))
                v -= product();
            else
                return v;
        }
    }
    double product() {
        double v = unary();
        for (;;) {
            if (eat("//")) {
                const double d = unary();
                if (d == 0)
                    fail("division by zero");
                v = std::floor(v / d);
            } else if (eat("*")) {
                v *= unary();
            } else if (eat("/")) {
                const double d = unary();
                if (d == 0)
                    fail("division by zero");
                v /= d;
            } else if (eat("%")) {
                const double d = unary();
                if (d == 0)
                    fail("division by zero");
                v = v - d * std::floor(v / d);
            } else {
                return v;
            }
        }
    }
    double unary() {
        Nest nest(nest_);
        if (eat("-"))
            return -unary();
        if (eat("+"))
            return unary();
        return power();
    }
    double power() {
        const double base = atom();
        if (eat("**"))
            return std::pow(base, unary());
        return base;
    }
    double atom() {
        skip();
        if (eat("(")) {
            const double v = conditional();
            if (!eat(")"))
                fail("expected ')'");
            return v;
        }
        const std::size_t start = i_;
        if (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) {
            while (i_ < s_.size() &&
                   (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                    ((s_[i_] == '+' || s_[i_] == '-') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))))
                ++i_;
            double v = 0;
            if (!numberText(s_.substr(start, i_ - start), v))
                fail("'" + s_.substr(start, i_ - start) + "' is not a number");
            return v;
        }
        while (i_ < s_.size() &&
               (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
            ++i_;
        if (i_ == start)
            fail(i_ < s_.size() ? "unexpected '" + s_.substr(i_, 1) + "'" : "incomplete");
        const std::string name = s_.substr(start, i_ - start);
        if (eat("("))
            return call(name);
        return lookup(name);
    }
    double call(const std::string& f) {
        std::vector<double> args;
        if (!eat(")")) {
            do
                args.push_back(conditional());
            while (eat(","));
            if (!eat(")"))
                fail("expected ')' after the arguments of " + f);
        }
        auto one = [&] {
            if (args.size() != 1)
                fail(f + " takes one argument");
            return args[0];
        };
        if ((f == "min" || f == "max") && !args.empty()) {
            double v = args[0];
            for (double a : args)
                v = f == "min" ? std::min(v, a) : std::max(v, a);
            return v;
        }
        if (f == "ceil")
            return std::ceil(one());
        if (f == "floor")
            return std::floor(one());
        if (f == "round")
            return std::nearbyint(one());
        if (f == "int")
            return std::trunc(one());
        if (f == "abs")
            return std::fabs(one());
        if (f == "sqrt")
            return std::sqrt(one());
        if (f == "log2")
            return std::log2(one());
        if (f == "log10")
            return std::log10(one());
        if (f == "log") {
            if (args.size() == 2)
                return std::log(args[0]) / std::log(args[1]);
            return std::log(one());
        }
        if (f == "exp")
            return std::exp(one());
        fail("unknown function '" + f + "'");
    }
    double lookup(const std::string& name) {
        if (name == "True")
            return 1;
        if (name == "False")
            return 0;
        const YAML::Node v = scope_.find(name);
        if (!v.IsDefined() || !v.IsScalar())
            fail("'" + name + "' is not in scope");
        double out = 0;
        if (numberText(v.Scalar(), out))
            return out;
        if (depth_ > 32)
            fail("names refer to each other too deeply");
        return Parser(v.Scalar(), scope_, depth_ + 1).parse();
    }
};

bool looksLikeExpression(const YAML::Node& v) {
    if (!v.IsScalar() || v.Tag() != "?") // quoted: a string as written
        return false;
    double ignored = 0;
    const std::string& s = v.Scalar();
    if (numberText(s, ignored) || s == "true" || s == "false" || s == "null" || s == "~" ||
        s.empty())
        return false;
    return true;
}

bool isName(const std::string& s) {
    return !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) &&
           std::all_of(s.begin(), s.end(),
                       [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

YAML::Node numberNode(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15)
        return YAML::Node(static_cast<long long>(v));
    std::ostringstream o;
    o.imbue(std::locale::classic());
    o.precision(17);
    o << v;
    return YAML::Node(o.str());
}

} // namespace

bool evaluateExpression(const std::string& text, const AttributeScope& scope, double& out,
                        std::string& error) {
    try {
        out = Parser(text, scope, 0).parse();
        if (!std::isfinite(out)) {
            error = "is not a finite number";
            return false;
        }
        return true;
    } catch (const std::runtime_error& e) {
        error = e.what();
        return false;
    }
}

void AttributeScope::push(const YAML::Node& attributes, const std::string& where) {
    levels_.emplace_back();
    if (!attributes.IsDefined() || attributes.IsNull())
        return;
    if (!attributes.IsMap())
        throw InputError(where, "expected a map of attributes");
    for (const auto& kv : attributes) {
        if (!kv.first.IsScalar())
            throw InputError(where, "expected attribute names as keys");
        // A name given twice: the first, as Timeloop reads it (timeloop_yaml notes it).
        const std::string& name = kv.first.Scalar();
        if (std::any_of(levels_.back().begin(), levels_.back().end(),
                        [&name](const auto& e) { return e.first == name; }))
            continue;
        YAML::Node value = kv.second;
        double number = 0;
        std::string ignored;
        if (looksLikeExpression(value)) {
            // A bare name takes the value it names, text or number
            // (technology: technology); anything else is arithmetic.
            const YAML::Node named = isName(value.Scalar()) ? find(value.Scalar()) : YAML::Node();
            if (named.IsDefined() && named.IsScalar())
                value.reset(named);
            else if (evaluateExpression(value.Scalar(), *this, number, ignored))
                value.reset(numberNode(number));
        }
        levels_.back().emplace_back(kv.first.Scalar(), value);
    }
}

YAML::Node AttributeScope::find(const std::string& name) const {
    for (auto level = levels_.rbegin(); level != levels_.rend(); ++level)
        for (auto it = level->rbegin(); it != level->rend(); ++it)
            if (it->first == name)
                return it->second;
    return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node AttributeScope::innermost(timeloop_yaml::NodeArena& arena) const {
    YAML::Node out = arena.make(YAML::NodeType::Map);
    if (!levels_.empty())
        for (const auto& [key, value] : levels_.back())
            out[key] = value;
    return out;
}

YAML::Node AttributeScope::flattened(const std::function<bool(const std::string&, int)>& keep,
                                     timeloop_yaml::NodeArena& arena) const {
    YAML::Node out = arena.make(YAML::NodeType::Map);
    for (int d = depth() - 1; d >= 0; --d)
        for (const auto& [key, value] : levels_[std::size_t(d)])
            if (!std::as_const(out)[key].IsDefined() && keep(key, d))
                out[key] = value;
    return out;
}

double evaluateNumber(const YAML::Node& value, const AttributeScope& scope,
                      const std::string& where) {
    if (!value.IsScalar())
        throw InputError(where, "expected a number");
    double out = 0;
    if (numberText(value.Scalar(), out))
        return out;
    std::string why;
    if (value.Tag() == "?" && evaluateExpression(value.Scalar(), scope, out, why))
        return out;
    throw InputError(where, "is '" + value.Scalar() + "'; expected a number" +
                                (why.empty() ? std::string() : " (" + why + ")"));
}

} // namespace mw::timeloop_read
