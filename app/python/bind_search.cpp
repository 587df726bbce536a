// The search driver from Python: every built-in searcher, and searchers
// written in Python (an object with run(ctx)) run by the same driver, so
// their budgets, seeds and traces compare with the built-ins'.
#include "common/error.h"
#include "model/cost_model.h"
#include "py_json.h"
#include "py_types.h"
#include "search/search.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cmath>

namespace py = pybind11;

namespace mwpy {

namespace {

// The driver's view for a Python searcher: charged evaluations, the RNG, the
// budget, the best so far.
struct Context {
    mw::SearchContext* ctx; // null once the run has ended (a script may keep ctx)
    std::shared_ptr<Space> space;
    // The run's generator, held here so that a kept ctx.rng outlives the run
    // (given back to the driver at the end).
    mw::Rng rng;

    mw::SearchContext& live() const {
        if (!ctx)
            throw mw::InputError("SearchContext",
                                 "is used after its run ended; expected it only within "
                                 "run(ctx) (the run's outcome is the SearchResult search() "
                                 "returns)");
        return *ctx;
    }
};

struct Result {
    mw::SearchResult result;
    std::shared_ptr<Space> space;
};

double costOf(double c) {
    return c >= mw::SearchContext::kInfinity ? INFINITY : c;
}

std::vector<mw::Mapping> mappingsOf(const Space& s, const py::object& batch) {
    std::vector<mw::Mapping> out;
    if (py::isinstance<py::array>(batch)) {
        const auto rows = encodedRows(batch, "evaluate_batch rows");
        if (rows.ndim() != 2 || std::size_t(rows.shape(1)) != s.encoding->size())
            throw mw::InputError("evaluate_batch", "expected an (n, " +
                                                       std::to_string(s.encoding->size()) +
                                                       ") array of encoded mappings");
        out.resize(std::size_t(rows.shape(0)));
        for (std::size_t i = 0; i < out.size(); ++i)
            if (!s.encoding->decode(rows.data() + i * s.encoding->size(), out[i]))
                throw mw::InputError("evaluate_batch", "row " + std::to_string(i) +
                                                           " is outside the encoding's bounds");
        return out;
    }
    for (const auto& m : batch) {
        if (!py::isinstance<PyMapping>(m))
            throw mw::InputError("evaluate_batch", "expected Mappings or an (n, " +
                                                       std::to_string(s.encoding->size()) +
                                                       ") array of encoded ones");
        out.push_back(own(s, m.cast<const PyMapping&>()));
    }
    return out;
}

} // namespace

PythonSearcher::PythonSearcher(py::object searcher, std::shared_ptr<Space> space)
    : searcher_(std::move(searcher)), space_(std::move(space)) {}

PythonSearcher::~PythonSearcher() {
    py::gil_scoped_acquire gil;
    searcher_ = py::object();
}

void PythonSearcher::run(mw::SearchContext& ctx) {
    py::gil_scoped_acquire gil;
    auto c = std::make_shared<Context>(
        Context{&ctx, space_ ? space_ : Space::like(ctx.space()), ctx.rng()});
    struct Ending { // also when run() raises
        Context& c;
        ~Ending() {
            c.live().rng() = c.rng;
            c.ctx = nullptr;
        }
    } ending{*c};
    searcher_.attr("run")(c);
}

void bindSearch(py::module_& m) {
    py::class_<Context, std::shared_ptr<Context>>(
        m, "SearchContext",
        "What the driver gives a Python searcher's run(ctx): charged evaluations, "
        "the RNG, the budget and the best so far.")
        .def_property_readonly("space", [](const Context& c) { return c.space; })
        .def_property_readonly(
            "rng", [](Context& c) -> mw::Rng& { return c.rng; },
            py::return_value_policy::reference_internal)
        .def(
            "param",
            [](const Context& c, const std::string& name, double fallback) {
                return c.live().param(name, fallback);
            },
            py::arg("name"), py::arg("default"), "A --param value, or the default.")
        .def(
            "evaluate",
            [](Context& c, const PyMapping& pm) {
                return costOf(c.live().evaluate(own(*c.space, pm)));
            },
            py::arg("mapping"), "Charged: the objective (inf when illegal).")
        .def(
            "evaluate_batch",
            [](Context& c, const py::object& batch) {
                mw::SearchContext& ctx = c.live();
                const std::vector<mw::Mapping> ms = mappingsOf(*c.space, batch);
                py::array_t<double> costs{py::ssize_t(ms.size())};
                double* out = costs.mutable_data();
                std::size_t charged = 0;
                {
                    py::gil_scoped_release release;
                    charged = ctx.evaluateBatch(ms.data(), ms.size(), out);
                }
                for (std::size_t i = 0; i < ms.size(); ++i)
                    out[i] = i < charged ? costOf(out[i]) : NAN;
                return costs;
            },
            py::arg("mappings"),
            "Charged, in parallel on the search's threads: a list of Mappings or an (n, "
            "encoding_size) array; costs (inf when illegal, NaN past the budget).")
        .def(
            "stopped", [](const Context& c) { return c.live().stopped(); },
            "Budget spent, time up, or cancelled: return from run().")
        .def(
            "stop", [](Context& c, const std::string& why) { c.live().stop(why); },
            py::arg("reason"))
        .def("is_known", [](const Context& c,
                            const PyMapping& pm) { return c.live().isKnown(own(*c.space, pm)); })
        .def("set_stat", [](Context& c, const std::string& k, double v) { c.live().setStat(k, v); })
        .def_property_readonly("evaluations",
                               [](const Context& c) { return c.live().evaluations(); })
        .def_property_readonly("remaining",
                               [](const Context& c) -> py::object {
                                   const auto r = c.live().remainingEvaluations();
                                   return r == std::numeric_limits<std::int64_t>::max()
                                              ? py::none()
                                              : py::cast(r);
                               })
        .def_property_readonly("best",
                               [](const Context& c) -> py::object {
                                   return c.live().hasBest()
                                              ? py::cast(PyMapping{c.live().best(), c.space})
                                              : py::none();
                               })
        .def_property_readonly("best_cost",
                               [](const Context& c) { return costOf(c.live().bestCost()); })
        .def_property_readonly("threads",
                               [](const Context& c) { return c.live().settings().threads; });

    py::class_<Result>(m, "SearchResult")
        .def_property_readonly("searcher", [](const Result& r) { return r.result.searcher; })
        .def_property_readonly("found", [](const Result& r) { return r.result.found; })
        .def_property_readonly(
            "best",
            [](const Result& r) -> py::object {
                return r.result.found ? py::cast(PyMapping{r.result.best, r.space}) : py::none();
            })
        .def_property_readonly("best_cost",
                               [](const Result& r) { return costOf(r.result.bestCost); })
        .def_property_readonly(
            "best_evaluation",
            [](const Result& r) -> py::object {
                if (!r.result.found)
                    return py::none();
                return evaluationDict(
                    *r.space, mw::evaluate(r.space->problem, r.space->arch, r.result.best), false);
            })
        .def_property_readonly("evaluations", [](const Result& r) { return r.result.evaluations; })
        .def_property_readonly("illegal", [](const Result& r) { return r.result.illegal; })
        .def_property_readonly("duplicates", [](const Result& r) { return r.result.duplicates; })
        .def_property_readonly("seconds", [](const Result& r) { return r.result.seconds; })
        .def_property_readonly("cancelled", [](const Result& r) { return r.result.cancelled; })
        .def_property_readonly("stop_reason", [](const Result& r) { return r.result.stopReason; })
        .def_property_readonly("stats", [](const Result& r) { return r.result.stats; })
        .def_property_readonly("notes", [](const Result& r) { return r.result.notes; })
        .def_property_readonly(
            "trace",
            [](const Result& r) {
                const auto& t = r.result.trace;
                py::array_t<double> a({py::ssize_t(t.size()), py::ssize_t(4)});
                auto v = a.mutable_unchecked<2>();
                for (std::size_t i = 0; i < t.size(); ++i) {
                    v(py::ssize_t(i), 0) = double(t[i].evaluation);
                    v(py::ssize_t(i), 1) = t[i].seconds;
                    v(py::ssize_t(i), 2) = costOf(t[i].cost);
                    v(py::ssize_t(i), 3) = costOf(t[i].best);
                }
                return a;
            },
            "Rows of (evaluation, seconds, cost, best), as trace.csv.")
        .def("__repr__", [](const Result& r) {
            return "<SearchResult " + r.result.searcher + ": " +
                   (r.result.found ? "best " + std::to_string(r.result.bestCost)
                                   : std::string("nothing legal")) +
                   " after " + std::to_string(r.result.evaluations) + " evaluations>";
        });

    // Python searchers registered by name, beside the built-in ones: a
    // dict of the module, not a registry in the engine.
    m.attr("_searchers") = py::dict();
    m.def(
        "register_searcher",
        [m](const std::string& name, const py::object& factory) {
            for (const auto& builtIn : mw::searcherNames())
                if (builtIn == name)
                    throw mw::InputError("register_searcher",
                                         "'" + name + "' is a built-in searcher");
            if (!PyCallable_Check(factory.ptr()))
                throw mw::InputError(
                    "register_searcher",
                    "expected a class or a callable that makes an object with run(ctx)");
            m.attr("_searchers")[py::str(name)] = factory;
        },
        py::arg("name"), py::arg("factory"),
        "Makes search(space, name) build factory() and run it through the driver.");
    m.def(
        "searchers",
        [m]() {
            std::vector<std::string> names = mw::searcherNames();
            for (const auto& [k, v] : m.attr("_searchers").cast<py::dict>())
                names.push_back(k.cast<std::string>());
            return names;
        },
        "The built-in searchers, then the registered ones.");

    m.def(
        "search",
        [m](const std::shared_ptr<Space>& space, const py::object& searcher, std::int64_t budget,
            double seconds, std::uint64_t seed, const std::string& objective, int threads,
            const py::object& params, const py::object& progress) {
            mw::SearchSettings s;
            if (!space)
                throw mw::InputError("space", "is None; expected a MapSpace");
            if (!std::isfinite(seconds))
                throw mw::InputError("seconds", "is " + std::to_string(seconds) +
                                                    "; expected a finite number of seconds");
            if (budget < 0 || seconds < 0)
                throw mw::InputError("search", "budget and seconds must not be negative");
            if (budget == 0 && seconds == 0)
                throw mw::InputError("search", "give budget=N (evaluations), seconds=S, or both");
            if (threads < 1)
                throw mw::InputError("threads", "expected a whole number >= 1");
            s.budget.evaluations = budget;
            s.budget.seconds = seconds;
            s.seed = seed;
            s.objective = mw::SearchObjective::parse(objective);
            s.threads = threads;
            if (!params.is_none()) {
                if (!py::isinstance<py::dict>(params))
                    throw mw::InputError("params", "expected a dict {name: number}");
                for (const auto& [k, v] : params.cast<py::dict>()) {
                    if (!py::isinstance<py::str>(k))
                        throw mw::InputError("params", "has a key that is not a string");
                    const std::string name = k.cast<std::string>();
                    mw::Json value = fromPython(v, "params." + name);
                    if (value.is_boolean()) // a flag: 1 or 0, as the command line's
                        value = value.get<bool>() ? 1 : 0;
                    if (!value.is_number() || !std::isfinite(value.get<double>()))
                        throw mw::InputError("params." + name,
                                             "is " +
                                                 (value.is_number()
                                                      ? std::to_string(value.get<double>())
                                                      : value.dump()) +
                                                 "; expected a finite number");
                    s.params[name] = value.get<double>();
                }
            }

            // The searcher: a built-in by name, a registered one, or an object.
            std::unique_ptr<mw::Searcher> made;
            std::string name;
            bool python = false;
            if (py::isinstance<py::str>(searcher)) {
                name = searcher.cast<std::string>();
                const py::dict registered = m.attr("_searchers");
                if (registered.contains(name)) {
                    made = std::make_unique<PythonSearcher>(registered[py::str(name)](), space);
                    python = true;
                } else {
                    made = mw::makeSearcher(name);
                }
            } else if (py::hasattr(searcher, "run")) {
                name = py::str(searcher.get_type().attr("__name__")).cast<std::string>();
                made = std::make_unique<PythonSearcher>(searcher, space);
                python = true;
            } else {
                throw mw::InputError("searcher",
                                     "expected a searcher's name or an object with run(ctx)");
            }

            // Progress: the callback (returning True cancels) and Ctrl-C.
            std::atomic<bool> cancel{false};
            std::optional<py::error_already_set> failure;
            mw::ProgressFn fn = [&](const mw::SearchProgress& p) {
                py::gil_scoped_acquire gil;
                if (failure)
                    return;
                try {
                    if (PyErr_CheckSignals() != 0)
                        throw py::error_already_set();
                    if (!progress.is_none()) {
                        py::dict d;
                        d["evaluations"] = p.evaluations;
                        d["seconds"] = p.seconds;
                        d["best"] = costOf(p.best);
                        d["finished"] = p.finished;
                        if (!p.phase.empty()) { // a step that is not search
                            d["phase"] = p.phase;
                            d["phase_fraction"] = p.phaseFraction;
                            d["phase_seconds_left"] = p.phaseSecondsLeft;
                        }
                        if (py::bool_(progress(d)))
                            cancel = true;
                    }
                } catch (py::error_already_set& e) {
                    failure.emplace(std::move(e));
                    cancel = true;
                }
            };
            Result r{{}, space};
            if (python) {
                r.result = mw::runSearch(*space->space, *made, name, s, fn, &cancel);
            } else {
                py::gil_scoped_release release;
                r.result = mw::runSearch(*space->space, *made, name, s, fn, &cancel);
            }
            if (failure)
                throw std::move(*failure);
            return r;
        },
        py::arg("space"), py::arg("searcher"), py::arg("budget") = 0, py::arg("seconds") = 0.0,
        py::arg("seed") = 1, py::arg("objective") = "edp", py::arg("threads") = 1,
        py::arg("params") = py::none(), py::arg("progress") = py::none(),
        "Runs a searcher (a built-in's name, a registered one's, or an object with run(ctx)) "
        "through the driver. progress(dict) is called as it goes; returning True cancels (the "
        "best so far is kept), as does Ctrl-C.");
}

} // namespace mwpy
