#include "io/session_io.h"

#include "common/error.h"
#include "common/json_fields.h"
#include "io/json_files.h"
#include "model/cost_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace mw {

namespace {

// A searcher's figures; JSON has no NaN or infinity, so those are left out.
Json statsJson(const std::map<std::string, double>& stats) {
    Json j = Json::object();
    for (const auto& [name, value] : stats)
        if (std::isfinite(value))
            j[name] = value;
    return j;
}

// JSON has no infinity: costs of illegal candidates are written as null.
Json costJson(double v) {
    return v >= SearchContext::kInfinity || !std::isfinite(v) ? Json(nullptr) : Json(v);
}
double costFromJson(const Json& j, const std::string& path) {
    return j.is_null() ? SearchContext::kInfinity : json_fields::as<double>(j, path);
}

using json_fields::checkFormat;
using json_fields::member;
using json_fields::optional;
using json_fields::required;

Json settingsJson(const SearchSettings& s) {
    Json params = Json::object();
    for (const auto& [k, v] : s.params)
        params[k] = v;
    return {{"budget_evaluations", s.budget.evaluations},
            {"budget_seconds", s.budget.seconds},
            {"seed", s.seed},
            {"objective", s.objective.name()},
            {"threads", s.threads},
            {"params", params}};
}

SearchSettings settingsFromJson(const Json& j, const std::string& where) {
    SearchSettings s;
    s.budget.evaluations = optional<std::int64_t>(j, "budget_evaluations", where, 0);
    s.budget.seconds = optional<double>(j, "budget_seconds", where, 0.0);
    if (s.budget.evaluations < 0 || s.budget.seconds < 0 ||
        (s.budget.evaluations == 0 && s.budget.seconds == 0))
        throw InputError(where, "needs a positive budget_evaluations or budget_seconds");
    s.seed = optional<std::uint64_t>(j, "seed", where, 1);
    try {
        s.objective = SearchObjective::parse(
            optional<std::string>(j, "objective", where, std::string("edp")));
    } catch (const InputError& e) { // (parse names --objective: here it is the file's field)
        throw InputError(where + ".objective", e.detail());
    }
    s.threads = optional<int>(j, "threads", where, 1);
    if (s.threads < 1 || s.threads > kMaxSearchThreads)
        throw InputError(where + ".threads", "is " + std::to_string(s.threads) +
                                                 "; expected 1 to " +
                                                 std::to_string(kMaxSearchThreads) + " threads");
    if (j.contains("params"))
        for (const auto& [k, v] : j.at("params").items()) {
            if (!v.is_number())
                throw InputError(where + ".params." + k, "expected a number");
            s.params[k] = v.get<double>();
        }
    return s;
}

} // namespace

Json toJson(const Session& s) {
    Json runs = Json::array();
    for (const SessionRun& r : s.runs) {
        Json jr = {{"searcher", r.searcher},
                   {"layer", r.layer},
                   {"settings", settingsJson(r.settings)},
                   {"finished", r.finished}};
        if (!r.constraints.is_null())
            jr["constraints"] = r.constraints;
        if (!r.stale.empty())
            jr["stale"] = r.stale;
        if (!r.design.empty())
            jr["design"] = r.design;
        if (r.finished) {
            const SearchResult& res = r.result;
            Json trace = Json::array();
            for (const TracePoint& t : res.trace)
                trace.push_back({t.evaluation, t.seconds, costJson(t.cost), costJson(t.best)});
            Json result = {
                {"found", res.found},
                {"best_objective", costJson(res.found ? res.bestCost : SearchContext::kInfinity)},
                {"evaluations", res.evaluations},
                {"illegal", res.illegal},
                {"duplicates", res.duplicates},
                {"seconds", res.seconds},
                {"cancelled", res.cancelled},
                {"stop_reason", res.stopReason},
                {"stats", statsJson(res.stats)},
                {"trace", trace}};
            if (!res.notes.empty())
                result["notes"] = res.notes;
            if (res.found && r.stale.empty()) {
                const int li = s.network.layerIndex(r.layer);
                const Problem p = buildProblem(s.network.layers.at(std::size_t(li)));
                result["best_mapping"] = toJson(res.best, p, s.arch);
            } else if (res.found) {
                // A stale run keeps its figures as computed, and its mapping
                // while its layer and the architecture's levels still name it.
                result["best_energy_pj"] = res.bestEvaluation.energy;
                result["best_cycles"] = res.bestEvaluation.cycles;
                const int li = s.network.layerIndex(r.layer);
                if (li >= 0 && res.best.numLevels == s.arch.numLevels())
                    try {
                        result["best_mapping"] = toJson(
                            res.best, buildProblem(s.network.layers[std::size_t(li)]), s.arch);
                    } catch (const InputError&) {
                    }
            }
            jr["result"] = result;
        }
        runs.push_back(jr);
    }
    Json out = {{"format", "mapwright.session"},
                {"version", kFormatVersion},
                {"name", s.name},
                {"architecture", toJson(s.arch)},
                {"workload", toJson(s.network)},
                {"current_layer", s.currentLayer},
                {"runs", runs},
                {"view",
                 {{"search_x", s.view.searchSeconds ? "seconds" : "evaluations"},
                  {"search_log_x", s.view.searchLogX}}}};
    if (!s.constraints.is_null())
        out["constraints"] = s.constraints;
    return out;
}

Session sessionFromJson(const Json& j, const std::string& where) {
    if (!j.is_object())
        throw InputError(where, "expected a JSON object (a mapwright.session)");
    const std::string root = where + ": $"; // the JSON path of the top-level fields
    const std::string format = optional<std::string>(j, "format", root, std::string());
    if (format != "mapwright.session")
        throw InputError(where + ": format", "is '" + format + "'; expected 'mapwright.session'");
    checkFormat(j, "mapwright.session", root); // a later build's session is refused, not misread
    Session s;
    s.name = optional<std::string>(j, "name", root, std::string());
    try {
        s.arch = architectureFromJson(member(j, "architecture", where));
    } catch (const InputError& e) {
        throw e.within(where + ": architecture");
    }
    try {
        s.network = networkFromJson(member(j, "workload", where));
    } catch (const InputError& e) {
        throw e.within(where + ": workload");
    }
    if (s.network.layers.empty())
        throw InputError(where + ": workload", "has no layers");
    s.currentLayer = optional<int>(j, "current_layer", root, 0);
    if (s.currentLayer < 0 || s.currentLayer >= int(s.network.layers.size()))
        throw InputError(where + ": current_layer",
                         "must be 0.." + std::to_string(s.network.layers.size() - 1));
    // Constraints name levels and dimensions: checked against the
    // architecture and the current layer here, against each layer a search runs on.
    auto constraintsOf = [&](const Json& c, const std::string& at) {
        if (c.is_null())
            return c;
        try {
            constraintsFromJson(c, buildProblem(s.network.layers[std::size_t(s.currentLayer)]),
                                s.arch);
        } catch (const InputError& e) {
            throw e.within(at);
        }
        return c;
    };
    if (j.contains("constraints"))
        s.constraints = constraintsOf(j.at("constraints"), where + ": constraints");
    if (j.contains("view")) {
        const Json& v = j.at("view");
        const std::string at = where + ": view";
        if (!v.is_object())
            throw InputError(at, "expected an object (search_x, search_log_x)");
        const std::string x = optional<std::string>(v, "search_x", at, std::string("evaluations"));
        if (x != "evaluations" && x != "seconds")
            throw InputError(at + ".search_x",
                             "is '" + x + "'; expected 'evaluations' or 'seconds'");
        s.view.searchSeconds = x == "seconds";
        s.view.searchLogX = optional<bool>(v, "search_log_x", at, false);
    }
    if (!j.contains("runs"))
        return s;
    const Json& runs = j.at("runs");
    if (!runs.is_array())
        throw InputError(where + ": runs", "expected an array");
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::string at = where + ": runs[" + std::to_string(i) + "]";
        const Json& jr = runs[i];
        SessionRun r;
        r.searcher = required<std::string>(jr, "searcher", at);
        r.layer = optional<std::string>(jr, "layer", at,
                                        s.network.layers[std::size_t(s.currentLayer)].name);
        // A stale run (it no longer fits the design) is kept as it was saved:
        // its layer may be gone and its mapping illegal.
        r.stale = optional<std::string>(jr, "stale", at, std::string());
        r.design = optional<std::string>(jr, "design", at, std::string());
        const int li = s.network.layerIndex(r.layer);
        if (li < 0 && r.stale.empty())
            throw InputError(at + ".layer", "'" + r.layer + "' is not a layer of the workload");
        r.settings = settingsFromJson(member(jr, "settings", at), at + ".settings");
        r.finished = optional<bool>(jr, "finished", at, false);
        // A run to start must name a searcher this program has; a finished
        // one may come from elsewhere (a searcher written in Python).
        if (!r.finished && r.searcher != kImportedRun)
            try {
                makeSearcher(r.searcher);
            } catch (const InputError& e) {
                throw InputError(at + ".searcher", e.detail());
            }
        if (jr.contains("constraints"))
            r.constraints = constraintsOf(jr.at("constraints"), at + ".constraints");
        if (r.finished) {
            const Json& res = member(jr, "result", at);
            const std::string rat = at + ".result";
            SearchResult& out = r.result;
            out.searcher = r.searcher;
            out.found = required<bool>(res, "found", rat);
            out.evaluations = optional<std::int64_t>(res, "evaluations", rat, std::int64_t(0));
            out.illegal = optional<std::int64_t>(res, "illegal", rat, std::int64_t(0));
            out.duplicates = optional<std::int64_t>(res, "duplicates", rat, std::int64_t(0));
            out.seconds = optional<double>(res, "seconds", rat, 0.0);
            // (Counts and times a run cannot have: the table would show them.)
            for (const auto& [field, value] :
                 {std::pair<const char*, double>{"evaluations", double(out.evaluations)},
                  {"illegal", double(out.illegal)},
                  {"duplicates", double(out.duplicates)},
                  {"seconds", out.seconds}})
                if (!(value >= 0.0))
                    throw InputError(rat + "." + field, "is negative; expected a count or time "
                                                        "from 0");
            out.cancelled = optional<bool>(res, "cancelled", rat, false);
            out.stopReason = optional<std::string>(res, "stop_reason", rat, std::string());
            if (res.contains("notes")) {
                const Json& notes = res.at("notes");
                if (!notes.is_array())
                    throw InputError(rat + ".notes", "expected a list of lines");
                for (const Json& line : notes) {
                    if (!line.is_string())
                        throw InputError(rat + ".notes", "expected a list of lines");
                    out.notes.push_back(line.get<std::string>());
                }
            }
            if (res.contains("stats")) {
                const Json& stats = res.at("stats");
                if (!stats.is_object())
                    throw InputError(rat + ".stats", "expected an object of named numbers");
                for (const auto& [name, v] : stats.items()) {
                    if (v.is_null())
                        continue; // a figure that was not finite (JSON has no NaN)
                    if (!v.is_number())
                        throw InputError(rat + ".stats." + name, "expected a number");
                    out.stats[name] = v.get<double>();
                }
            }
            out.bestCost = costFromJson(res.contains("best_objective") ? res.at("best_objective")
                                                                       : Json(nullptr),
                                        rat + ".best_objective");
            if (res.contains("trace")) {
                const Json& trace = res.at("trace");
                if (!trace.is_array())
                    throw InputError(rat + ".trace",
                                     "expected [evaluation, seconds, cost, best] rows");
                for (std::size_t k = 0; k < trace.size(); ++k) {
                    const Json& t = trace[k];
                    const std::string row = rat + ".trace[" + std::to_string(k) + "]";
                    if (!t.is_array() || t.size() != 4)
                        throw InputError(row, "expected [evaluation, seconds, cost, best]");
                    out.trace.push_back({json_fields::as<std::int64_t>(t[0], row),
                                         json_fields::as<double>(t[1], row),
                                         costFromJson(t[2], row), costFromJson(t[3], row)});
                    if (out.trace.back().evaluation < 0 || !(out.trace.back().seconds >= 0.0))
                        throw InputError(row, "has a negative evaluation or time; expected "
                                              "[evaluation, seconds, cost, best] from 0");
                }
            }
            if (out.found && !r.stale.empty()) {
                out.bestEvaluation.energy = optional<double>(res, "best_energy_pj", rat, 0.0);
                out.bestEvaluation.cycles =
                    optional<std::int64_t>(res, "best_cycles", rat, std::int64_t(0));
                out.bestEvaluation.edp =
                    out.bestEvaluation.energy * 1e-12 * double(out.bestEvaluation.cycles);
                out.bestEvaluation.valid = true; // the figures it was computed with
                if (li >= 0 && res.contains("best_mapping"))
                    try {
                        out.best = mappingFromJson(res.at("best_mapping"),
                                                   buildProblem(s.network.layers[std::size_t(li)]),
                                                   s.arch);
                    } catch (const InputError&) {
                        out.best = Mapping{}; // no longer readable: the figures stay
                    }
            } else if (out.found) {
                const Problem p = buildProblem(s.network.layers[std::size_t(li)]);
                try {
                    out.best = mappingFromJson(member(res, "best_mapping", rat), p, s.arch);
                } catch (const InputError& e) {
                    throw e.within(rat + ".best_mapping");
                }
                out.bestEvaluation = evaluate(p, s.arch, out.best);
                if (!out.bestEvaluation.valid)
                    throw InputError(rat + ".best_mapping", "is not a legal mapping of layer '" +
                                                                r.layer + "' on this architecture");
            }
        }
        s.runs.push_back(std::move(r));
    }
    return s;
}

SearchSettings searchSettingsFromMapper(const TimeloopMapper& m) {
    SearchSettings s;
    s.budget.seconds = 60;
    s.objective = SearchObjective::parse(m.objective);
    s.threads = m.threads > 0 ? m.threads : 1;
    if (m.searcher == "random-pruned") {
        s.params["victory"] = double(m.victoryCondition);
        s.params["timeout"] = double(m.timeout);
        s.params["permutations"] = double(m.maxPermutations);
    }
    if (m.searchSize > 0)
        s.budget.evaluations = m.searchSize;
    return s;
}

namespace {

// FNV-1a over the text, as 16 hex digits: stable across builds and machines.
std::uint64_t fnv1a(std::string_view text, std::uint64_t h = 0xcbf29ce484222325ull) {
    for (const unsigned char c : text) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

std::string layerText(const LayerSpec& layer) {
    Network one;
    one.layers = {layer};
    return toJson(one).at("layers").dump();
}

std::string hex(std::uint64_t h) {
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
    return out;
}

} // namespace

std::string designFingerprint(const Architecture& a, const LayerSpec& layer) {
    return hex(fnv1a(layerText(layer), fnv1a(toJson(a).dump() + "\n")));
}

std::vector<std::string> designFingerprints(const Architecture& a, const Network& network) {
    const std::uint64_t arch = fnv1a(toJson(a).dump() + "\n"); // once for every layer
    std::vector<std::string> out;
    for (const LayerSpec& layer : network.layers)
        out.push_back(hex(fnv1a(layerText(layer), arch)));
    return out;
}

Session sessionFromTimeloop(const TimeloopCase& c) {
    Session s;
    s.name = c.problem.name;
    s.arch = c.arch;
    s.network = networkOf(c.problem);
    const LayerSpec& layer = s.network.layers.front();
    if (c.hasConstraints)
        s.constraints = c.constraints;
    if (c.hasMapping) {
        SessionRun run;
        run.searcher = kImportedRun;
        run.layer = layer.name;
        run.settings.budget.evaluations = 1;
        run.finished = true;
        run.constraints = s.constraints;
        run.design = designFingerprint(s.arch, layer);
        SearchResult& r = run.result;
        r.searcher = kImportedRun;
        r.best = c.mapping;
        r.bestEvaluation = evaluate(c.problem, c.arch, c.mapping);
        r.found = r.bestEvaluation.valid;
        r.evaluations = 1;
        r.illegal = r.found ? 0 : 1;
        r.bestCost =
            r.found ? run.settings.objective.value(r.bestEvaluation) : SearchContext::kInfinity;
        r.trace.push_back({1, 0.0, r.bestCost, r.bestCost});
        r.stopReason = "imported from Timeloop";
        if (!r.found) { // why: its table row and status say so, not only "none found"
            std::string why;
            for (const std::string& v : describeViolations(r.bestEvaluation, c.problem, c.arch))
                why += (why.empty() ? "" : "; ") + v;
            r.stopReason += ", not a legal mapping: " + why;
        }
        s.runs.push_back(run);
    }
    if (c.hasMapper) {
        SessionRun run;
        run.searcher = c.mapper.searcher;
        run.layer = layer.name;
        run.settings = searchSettingsFromMapper(c.mapper);
        run.constraints = s.constraints;
        s.runs.push_back(run);
    }
    return s;
}

Session loadSession(const std::string& path) {
    return sessionFromJson(readJsonFile(path), path);
}

void saveSession(const std::string& path, const Session& s) {
    writeTextFile(path, toJson(s).dump(1) + "\n");
}

std::string traceCsv(const SearchResult& r) {
    // std::to_chars writes what printf's %.10g and %.10e write, as the
    // streams here did; a stream per number took 8x the instructions
    // (callgrind, the trace of a 100k-evaluation annealing run).
    std::string out = "evaluation,seconds,cost,best\n";
    out.reserve(out.size() + r.trace.size() * 56);
    char buffer[128];
    char* const end = buffer + sizeof buffer;
    auto cost = [end](char* at, double v) {
        if (v >= SearchContext::kInfinity) {
            const char inf[] = "inf";
            return std::copy(inf, inf + 3, at);
        }
        return std::to_chars(at, end, v, std::chars_format::scientific, 10).ptr;
    };
    for (const TracePoint& t : r.trace) {
        char* at = std::to_chars(buffer, end, t.evaluation).ptr;
        *at++ = ',';
        at = std::to_chars(at, end, t.seconds, std::chars_format::general, 10).ptr;
        *at++ = ',';
        at = cost(at, t.cost);
        *at++ = ',';
        at = cost(at, t.best);
        *at++ = '\n';
        out.append(buffer, at);
    }
    return out;
}

} // namespace mw
