// mapwright.constraints files (the format is described in json_io.h).
#include "common/error.h"
#include "common/json_fields.h"
#include "io/json_files.h"
#include "io/json_io.h"
#include "io/timeloop/timeloop.h"

#include <algorithm>

namespace mw {

namespace {

using json_fields::arrayMember;
using json_fields::as;
using json_fields::checkFormat;
using json_fields::member;
using json_fields::required;
using json_fields::typeName;

// Dimension names to indices; names the problem lacks are skipped (see the
// header), a name given twice is an error.
std::vector<int> dimsOf(const Json& list, const std::string& path, const Problem& p) {
    std::vector<int> dims;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string name = as<std::string>(list[i], path + "[" + std::to_string(i) + "]");
        const int d = p.dimIndex(name);
        if (d < 0)
            continue;
        if (std::find(dims.begin(), dims.end(), d) != dims.end())
            throw InputError(path, "names " + name + " twice; expected each dimension once");
        dims.push_back(d);
    }
    return dims;
}

// ["M", "*", "C", "R"]: M outermost, C then R innermost, the rest free.
OrderConstraint orderOf(const Json& list, const std::string& path, const Problem& p) {
    if (!list.is_array())
        throw InputError(path, "expected an array of dimension names, got " + typeName(list));
    Json names = Json::array();
    int star = -1;
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].is_string() && list[i].get<std::string>() == "*") {
            if (star >= 0)
                throw InputError(path, "has two \"*\"; expected at most one");
            star = static_cast<int>(names.size());
            continue;
        }
        names.push_back(list[i]);
    }
    const std::vector<int> dims = dimsOf(names, path, p);
    // Where "*" falls among the dims this problem has.
    int outerCount = 0;
    if (star >= 0)
        for (int i = 0; i < star; ++i)
            outerCount += p.dimIndex(names[static_cast<std::size_t>(i)].get<std::string>()) >= 0;
    OrderConstraint oc;
    if (star < 0) { // the whole order: the dims left out innermost, in the problem's order
        std::vector<int> all = dims;
        for (int d = 0; d < p.numDims(); ++d)
            if (std::find(all.begin(), all.end(), d) == all.end())
                all.push_back(d);
        for (int d : all)
            oc.outer[oc.numOuter++] = static_cast<std::uint8_t>(d);
        return oc;
    }
    for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
        if (i < outerCount)
            oc.outer[oc.numOuter++] = static_cast<std::uint8_t>(dims[static_cast<std::size_t>(i)]);
        else
            oc.inner[oc.numInner++] = static_cast<std::uint8_t>(dims[static_cast<std::size_t>(i)]);
    }
    return oc;
}

// {dim: factor} into factors (0 = the whole dimension).
void factorsOf(const Json& obj, const std::string& path, const Problem& p,
               std::array<std::int64_t, kMaxDims>& out) {
    if (!obj.is_object())
        throw InputError(path, "expected an object {dimension: factor}, got " + typeName(obj));
    for (const auto& [dim, v] : obj.items()) {
        const std::int64_t f = as<std::int64_t>(v, path + "." + dim);
        if (f < 0)
            throw InputError(path + "." + dim, "is " + std::to_string(f) +
                                                   "; expected a positive factor (0: the whole "
                                                   "dimension)");
        const int d = p.dimIndex(dim);
        if (d >= 0)
            out[d] = f == 0 ? p.dims[d].bound : f;
    }
}

} // namespace

// Notes for the dimension names of a file the problem lacks: ignored by
// design (one file serves conv layers and GEMMs), but a typo ("ZZ", "Nope")
// would otherwise change nothing without a word. One note per name, with
// the places it is written (and no layer named, so that a network's layers
// share it).
void noteUnknownDimensions(const Json& j, const Problem& p, std::vector<std::string>& notes) {
    if (!j.contains("levels") || !j.at("levels").is_array())
        return;
    const Json& levels = j.at("levels");
    std::vector<std::pair<std::string, std::string>> unknown; // name, where (in file order)
    auto check = [&](const std::string& name, const std::string& path) {
        if (name == "*" || p.dimIndex(name) >= 0)
            return;
        for (auto& [n, where] : unknown)
            if (n == name) {
                where += ", " + path;
                return;
            }
        unknown.emplace_back(name, path);
    };
    for (std::size_t i = 0; i < levels.size(); ++i) {
        const std::string path = "$.levels[" + std::to_string(i) + "]";
        for (const char* key : {"temporal", "spatial_x", "spatial_y"})
            if (levels[i].contains(key) && levels[i].at(key).is_object())
                for (const auto& [dim, v] : levels[i].at(key).items())
                    check(dim, path + "." + key);
        for (const char* key :
             {"order", "spatial_order", "spatial_dims", "spatial_dims_x", "spatial_dims_y"})
            if (levels[i].contains(key) && levels[i].at(key).is_array())
                for (const Json& name : levels[i].at(key))
                    if (name.is_string())
                        check(name.get<std::string>(), path + "." + key);
    }
    std::string dims;
    for (const auto& d : p.dims)
        dims += (dims.empty() ? "" : ", ") + d.name;
    for (const auto& [name, where] : unknown)
        notes.push_back("'" + name + "' is not a dimension of the problem (" + dims +
                        "): ignored at " + where);
}

MapSpaceConstraints constraintsFromJson(const Json& j, const Problem& p, const Architecture& a) {
    const std::string root = "$";
    checkFormat(j, "mapwright.constraints", root);
    json_fields::onlyKeys(
        j, root,
        {"format", "version", "description", "architecture", "levels", "min_spatial_utilization"});
    MapSpaceConstraints c;
    c.levels.resize(static_cast<std::size_t>(a.numLevels()));
    c.minSpatialUtilization =
        json_fields::optional<double>(j, "min_spatial_utilization", root, 0.0);
    if (c.minSpatialUtilization < 0 || c.minSpatialUtilization > 1)
        throw InputError(root + ".min_spatial_utilization", "expected a number from 0 to 1");
    if (!j.contains("levels"))
        return c;
    const Json& levels = arrayMember(j, "levels", root);
    std::vector<char> seen(static_cast<std::size_t>(a.numLevels()), 0);
    for (std::size_t i = 0; i < levels.size(); ++i) {
        const std::string path = root + ".levels[" + std::to_string(i) + "]";
        const Json& lj = levels[i];
        json_fields::onlyKeys(lj, path,
                              {"level", "temporal", "spatial_x", "spatial_y", "order",
                               "spatial_order", "keep", "bypass", "spatial_dims", "spatial_dims_x",
                               "spatial_dims_y"});
        const std::string name = required<std::string>(lj, "level", path);
        const int l = a.levelIndex(name);
        if (l < 0)
            throw InputError(path + ".level",
                             "'" + name + "' is not a level of architecture '" + a.name + "'");
        if (seen[static_cast<std::size_t>(l)]++)
            throw InputError(path + ".level",
                             "'" + name + "' is constrained twice; expected one entry per level");
        LevelConstraint& lc = c.levels[static_cast<std::size_t>(l)];
        if (lj.contains("temporal"))
            factorsOf(member(lj, "temporal", path), path + ".temporal", p, lc.temporal);
        if (lj.contains("spatial_x"))
            factorsOf(member(lj, "spatial_x", path), path + ".spatial_x", p, lc.spatialX);
        if (lj.contains("spatial_y"))
            factorsOf(member(lj, "spatial_y", path), path + ".spatial_y", p, lc.spatialY);
        if (lj.contains("order"))
            lc.order = orderOf(member(lj, "order", path), path + ".order", p);
        if (lj.contains("spatial_order"))
            lc.spatialOrder =
                orderOf(member(lj, "spatial_order", path), path + ".spatial_order", p);
        for (const char* key : {"keep", "bypass"}) {
            if (!lj.contains(key))
                continue;
            const Json& list = arrayMember(lj, key, path);
            for (std::size_t k = 0; k < list.size(); ++k) {
                const std::string ep = path + "." + key + "[" + std::to_string(k) + "]";
                const std::string tensor = as<std::string>(list[k], ep);
                const int t = p.tensorIndex(tensor);
                if (t < 0)
                    throw InputError(ep, "'" + tensor + "' is not a tensor of problem '" + p.name +
                                             "'");
                const bool keep = std::string(key) == "keep";
                if ((lc.keepFixed >> t) & 1u && ((lc.keepValue >> t) & 1u) != keep)
                    throw InputError(ep, "contradictory: '" + tensor +
                                             "' is both kept and bypassed at level '" + name + "'");
                lc.keepFixed = static_cast<std::uint8_t>(lc.keepFixed | (1u << t));
                if (keep)
                    lc.keepValue = static_cast<std::uint8_t>(lc.keepValue | (1u << t));
            }
        }
        const bool anySpatial = lj.contains("spatial_dims") || lj.contains("spatial_dims_x") ||
                                lj.contains("spatial_dims_y");
        if (anySpatial) {
            std::uint32_t both = 0, x = 0, y = 0;
            if (lj.contains("spatial_dims"))
                both = dimMask(
                    dimsOf(arrayMember(lj, "spatial_dims", path), path + ".spatial_dims", p));
            if (lj.contains("spatial_dims_x"))
                x = dimMask(
                    dimsOf(arrayMember(lj, "spatial_dims_x", path), path + ".spatial_dims_x", p));
            if (lj.contains("spatial_dims_y"))
                y = dimMask(
                    dimsOf(arrayMember(lj, "spatial_dims_y", path), path + ".spatial_dims_y", p));
            lc.spatialAllowedX = both | x;
            lc.spatialAllowedY = both | y;
        }
    }
    return c;
}

Json readConstraintsFile(const std::string& path, const Problem& p, const Architecture& a,
                         std::vector<std::string>& notes) {
    if (isTimeloopFileName(path))
        return importTimeloopConstraints(readTimeloopFiles({path}), p, a, notes);
    return json_fields::withFile(path, [&](const Json& j) {
        constraintsFromJson(j, p, a); // (its errors, located in the file)
        noteUnknownDimensions(j, p, notes);
        return j;
    });
}

MapSpaceConstraints loadConstraints(const std::string& path, const Problem& p,
                                    const Architecture& a, std::vector<std::string>* notes) {
    std::vector<std::string> unshown;
    return constraintsFromJson(readConstraintsFile(path, p, a, notes ? *notes : unshown), p, a);
}

} // namespace mw
