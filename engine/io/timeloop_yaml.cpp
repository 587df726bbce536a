#include "io/timeloop_yaml.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace mw::timeloop_yaml {

namespace {

YAML::Node parseFile(const TimeloopText& file) {
    try {
        return YAML::Load(file.text);
    } catch (const YAML::ParserException& e) {
        throw InputError(file.name + ":" + std::to_string(e.mark.line + 1),
                         "malformed YAML (" + e.msg + ")");
    } catch (const YAML::Exception& e) {
        throw InputError(file.name, std::string("cannot be read as YAML (") + e.what() + ")");
    }
}

std::string underscores(std::string s) {
    std::replace(s.begin(), s.end(), '-', '_');
    return s;
}

} // namespace

const Spec::Entry* Spec::find(std::initializer_list<const char*> names) const {
    for (const char* n : names) {
        const auto it = keys.find(n);
        if (it != keys.end())
            return &it->second;
    }
    return nullptr;
}

Spec mergeFiles(const std::vector<TimeloopText>& files) {
    if (files.empty())
        throw InputError("Timeloop input", "no files given; expected YAML files such as "
                                           "arch.yaml problem.yaml mapping.yaml");
    Spec spec;
    for (const TimeloopText& f : files) {
        const YAML::Node root = parseFile(f);
        if (root.IsNull() || !root.IsDefined())
            continue; // an empty file adds nothing
        if (!root.IsMap())
            throw InputError(f.name, "expected a YAML map of top-level keys (architecture, "
                                     "problem, mapping, ...)");
        for (const auto& kv : root) {
            const std::string key = underscores(kv.first.Scalar());
            spec.keys[key] = {kv.second, f.name};
        }
    }
    return spec;
}

std::string at(const std::string& file, const YAML::Node& n) {
    const YAML::Mark mark = n.Mark();
    if (mark.line < 0)
        return file;
    return file + ":" + std::to_string(mark.line + 1);
}

YAML::Node child(const YAML::Node& map, const std::string& key) {
    if (!map.IsDefined() || !map.IsMap())
        return YAML::Node();
    const std::string wanted = underscores(key);
    for (const auto& kv : map)
        if (kv.first.IsScalar() && underscores(kv.first.Scalar()) == wanted)
            return kv.second;
    return YAML::Node();
}

YAML::Node firstChild(const YAML::Node& map, std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
        const YAML::Node n = child(map, k);
        if (given(n))
            return n;
    }
    return YAML::Node();
}

std::string text(const YAML::Node& n, const std::string& where) {
    if (!n.IsScalar())
        throw InputError(where, "expected a single value, got a list or map");
    return n.Scalar();
}

std::int64_t parseCount(const std::string& digits, const std::string& where,
                        const std::string& what) {
    std::int64_t v = -1;
    const char* end = digits.data() + digits.size();
    const auto [stop, ec] = std::from_chars(digits.data(), end, v);
    if (digits.empty() || ec != std::errc() || stop != end || v < 0 || v > kMaxCount)
        throw InputError(where, what + " '" + digits + "': expected a whole number up to 10^12");
    return v;
}

std::int64_t countProduct(std::int64_t a, std::int64_t b, const std::string& where) {
    if (a != 0 && b > kMaxCount / a)
        throw InputError(where, "more than 10^12 instances; expected a smaller hierarchy");
    return a * b;
}

std::pair<std::string, std::int64_t> splitName(const std::string& full, const std::string& where) {
    const auto open = full.find('[');
    if (open == std::string::npos)
        return {full, 1};
    const auto dots = full.find("..", open);
    const auto close = full.find(']', open);
    if (dots == std::string::npos || close == std::string::npos || close < dots)
        return {full.substr(0, open), 1};
    const std::string range = "the range of '" + full + "'";
    const std::int64_t lo = parseCount(full.substr(open + 1, dots - open - 1), where, range);
    const std::int64_t hi = parseCount(full.substr(dots + 2, close - dots - 2), where, range);
    if (hi < lo)
        throw InputError(where, range + " is empty; expected [first..last] with first <= last");
    return {full.substr(0, open), hi - lo + 1};
}

std::string tableComponentName(const std::string& full, const std::string& where) {
    // Ranges hold dots of their own: drop them before taking the last part.
    std::string plain;
    int depth = 0;
    for (char c : full) {
        if (c == '[')
            ++depth;
        else if (c == ']')
            depth = std::max(0, depth - 1);
        else if (depth == 0)
            plain += c;
    }
    if (depth != 0 || plain.empty())
        throw InputError(where, "table name '" + full + "': expected path.component[a..b]");
    const auto dot = plain.rfind('.');
    return dot == std::string::npos ? plain : plain.substr(dot + 1);
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

} // namespace mw::timeloop_yaml
