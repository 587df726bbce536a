// Loading architectures, networks, mappings, constraints and Timeloop files;
// the map space (sampling, moves, repair, encoding); evaluation, one mapping
// at a time or a NumPy batch on several threads with the GIL released.
#include "bench/model_bench.h"
#include "common/error.h"
#include "io/json_io.h"
#include "io/onnx_import.h"
#include "io/timeloop/timeloop.h"
#include "model/cost_model.h"
#include "py_json.h"
#include "py_types.h"
#include "search/search.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

namespace py = pybind11;

namespace mwpy {

namespace {

// As the file system spells it (os.fsencode: a name that is not UTF-8 too).
std::string pathOf(const py::object& src) {
    return py::bytes(py::module_::import("os").attr("fsencode")(src)).cast<std::string>();
}

// A thread count as the command line takes it, or 0 for every core.
int threadsOf(int threads) {
    if (threads < 0 || threads > mw::kMaxSearchThreads)
        throw mw::InputError("threads", "is " + std::to_string(threads) + "; expected 1 to " +
                                            std::to_string(mw::kMaxSearchThreads) +
                                            ", or 0 for every core");
    return threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
}

bool isPath(const py::object& src) {
    return py::isinstance<py::str>(src) || py::hasattr(src, "__fspath__");
}

// A source given as a path or as a dict of the JSON format.
template <typename FromPath, typename FromJson>
auto load(const py::object& src, const char* what, FromPath fromPath, FromJson fromJson) {
    if (isPath(src))
        return fromPath(pathOf(src));
    if (py::isinstance<py::dict>(src))
        return fromJson(fromPython(src, what));
    throw mw::InputError(what, "expected a path or a dict of its JSON format");
}

// What an import dropped or doubts, as Python warns.
void warnNotes(const std::vector<std::string>& notes) {
    for (const auto& n : notes)
        if (PyErr_WarnEx(PyExc_UserWarning, n.c_str(), 1) != 0)
            throw py::error_already_set(); // (warnings turned into errors)
}

mw::Json constraintsFrom(const py::object& src, const mw::Problem& p, const mw::Architecture& a) {
    if (src.is_none())
        return nullptr;
    std::vector<std::string> notes;
    if (isPath(src)) {
        // Checked here so that errors name the file, as the command line's do.
        mw::Json c = mw::readConstraintsFile(pathOf(src), p, a, notes);
        warnNotes(notes);
        return c;
    }
    mw::Json c = fromPython(src, "constraints");
    try {
        mw::constraintsFromJson(c, p, a);
    } catch (const mw::InputError& e) {
        throw e.within("constraints");
    }
    mw::noteUnknownDimensions(c, p, notes);
    warnNotes(notes);
    return c;
}

mw::Mapping mappingFrom(const Space& s, const py::object& src) {
    if (isPath(src))
        return mw::loadMapping(pathOf(src), s.problem, s.arch);
    try {
        return mw::mappingFromJson(fromPython(src, "mapping"), s.problem, s.arch);
    } catch (const mw::InputError& e) {
        throw e.where().rfind("mapping", 0) == 0 ? e : e.within("mapping");
    }
}

PyMapping wrap(const std::shared_ptr<Space>& s, const mw::Mapping& m) {
    return {m, s};
}

// One scratch evaluation per thread: an Evaluation is large, and zeroing
// one per call would cost more than the model.
mw::Evaluation& scratch() {
    thread_local mw::Evaluation e;
    return e;
}

// "(3, 4)", as NumPy prints a shape.
std::string shapeText(const py::array& a) {
    std::string text = "(";
    for (py::ssize_t i = 0; i < a.ndim(); ++i)
        text += std::to_string(a.shape(i)) + (a.ndim() == 1 ? "," : i + 1 < a.ndim() ? ", " : "");
    return text + ")";
}

py::array_t<std::int64_t> encodeArray(const Space& s, const mw::Mapping& m) {
    py::array_t<std::int64_t> out{py::ssize_t(s.encoding->size())};
    s.encoding->encode(m, out.mutable_data());
    return out;
}

mw::Mapping decodeArray(const Space& s, py::array_t<std::int64_t, py::array::c_style> v) {
    if (v.ndim() != 1 || std::size_t(v.shape(0)) != s.encoding->size())
        throw mw::InputError("encoded mapping", "has shape " + shapeText(v) + "; expected (" +
                                                    std::to_string(s.encoding->size()) + ",)");
    mw::Mapping m;
    if (!s.encoding->decode(v.data(), m)) {
        const auto names = s.encoding->names();
        for (std::size_t i = 0; i < s.encoding->size(); ++i)
            if (v.data()[i] < 0 || v.data()[i] >= s.encoding->bounds()[i])
                throw mw::InputError("encoded mapping[" + std::to_string(i) + "] (" + names[i] +
                                         ")",
                                     "is " + std::to_string(v.data()[i]) + "; expected 0.." +
                                         std::to_string(s.encoding->bounds()[i] - 1));
    }
    return m;
}

} // namespace

// Encoded rows as integers: a float array whose values are whole is taken,
// one with a fraction is refused (NumPy's cast would drop it in silence, and
// 1e30 would wrap).
py::array_t<std::int64_t, py::array::c_style> encodedRows(const py::object& rows,
                                                          const char* what) {
    const py::array a = py::array::ensure(rows);
    if (!a)
        throw mw::InputError(what, "expected an integer array");
    if (a.dtype().kind() == 'f') {
        const auto f = a.cast<py::array_t<double, py::array::c_style | py::array::forcecast>>();
        for (py::ssize_t i = 0; i < f.size(); ++i) {
            const double v = f.data()[i];
            if (!(v == std::floor(v) && std::abs(v) < 9.2e18))
                throw mw::InputError(std::string(what) + " (flat index " + std::to_string(i) + ")",
                                     "is " + py::str(py::float_(v)).cast<std::string>() +
                                         "; expected a whole number");
        }
    } else if (a.dtype().kind() != 'i' && a.dtype().kind() != 'u' && a.dtype().kind() != 'b') {
        throw mw::InputError(what, "has dtype " + py::str(a.dtype()).cast<std::string>() +
                                       "; expected integers");
    }
    return a.cast<py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>>();
}

const mw::Mapping& own(const Space& s, const PyMapping& m) {
    // Another space of the same shapes (a search context's copy) will do.
    bool same = m.space.get() == &s;
    if (!same) {
        const mw::Problem &p = m.space->problem, &q = s.problem;
        same = p.name == q.name && p.numDims() == q.numDims() &&
               m.space->arch.name == s.arch.name && m.space->arch.numLevels() == s.arch.numLevels();
        for (int d = 0; same && d < p.numDims(); ++d)
            same = p.dims[d].name == q.dims[d].name && p.dims[d].bound == q.dims[d].bound;
    }
    if (!same)
        throw mw::InputError("mapping", "belongs to another map space (" + m.space->problem.name +
                                            " on " + m.space->arch.name + ")");
    return m.mapping;
}

std::shared_ptr<Space> Space::make(mw::Problem p, mw::Architecture a, mw::Json constraints) {
    auto s = std::make_shared<Space>();
    s->problem = std::move(p);
    s->arch = std::move(a);
    s->constraints = std::move(constraints);
    const mw::MapSpaceConstraints c =
        s->constraints.is_null() ? mw::MapSpaceConstraints{}
                                 : mw::constraintsFromJson(s->constraints, s->problem, s->arch);
    s->space = std::make_unique<mw::MapSpace>(s->problem, s->arch, c);
    s->encoding = std::make_unique<mw::MappingEncoding>(*s->space);
    return s;
}

std::shared_ptr<Space> Space::like(const mw::MapSpace& other) {
    auto s = std::make_shared<Space>();
    s->problem = other.problem();
    s->arch = other.arch();
    s->space = std::make_unique<mw::MapSpace>(s->problem, s->arch, other.constraints());
    s->encoding = std::make_unique<mw::MappingEncoding>(*s->space);
    return s;
}

py::dict evaluationDict(const Space& s, const mw::Evaluation& e, bool detail) {
    if (detail)
        return toPython(mw::toJson(e, s.problem, s.arch)).cast<py::dict>();
    py::dict d;
    d["valid"] = e.valid;
    py::list violations;
    if (!e.valid)
        for (const auto& v : mw::describeViolations(e, s.problem, s.arch))
            violations.append(v);
    d["violations"] = violations;
    d["cycles"] = e.cycles;
    d["energy_pJ"] = e.energy;
    d["utilization"] = e.utilization;
    d["edp"] = e.edp;
    d["computes"] = e.computes;
    return d;
}

void bindModel(py::module_& m) {
    py::class_<mw::Rng>(m, "Rng", "A seeded random number generator (xoshiro256**).")
        .def(py::init<std::uint64_t>(), py::arg("seed") = 1)
        .def("random", &mw::Rng::uniform, "A float in [0, 1).")
        .def(
            "below",
            [](mw::Rng& r, std::uint64_t n) {
                if (n == 0)
                    throw mw::InputError("n", "is 0; expected at least 1 (an integer in [0, n))");
                return r.below(n);
            },
            py::arg("n"), "An integer in [0, n).");

    py::class_<mw::Architecture, std::shared_ptr<mw::Architecture>>(m, "Architecture")
        .def_readonly("name", &mw::Architecture::name)
        .def_readonly("technology_nm", &mw::Architecture::technologyNm)
        .def_property_readonly("levels",
                               [](const mw::Architecture& a) {
                                   std::vector<std::string> names;
                                   for (const auto& l : a.levels)
                                       names.push_back(l.name);
                                   return names;
                               })
        .def_property_readonly("macs",
                               [](const mw::Architecture& a) { return a.compute.instances(); })
        .def("to_dict", [](const mw::Architecture& a) { return toPython(mw::toJson(a)); })
        .def("__repr__", [](const mw::Architecture& a) {
            return "<Architecture " + a.name + ": " + std::to_string(a.numLevels()) + " levels, " +
                   std::to_string(a.compute.instances()) + " MACs>";
        });

    py::class_<mw::Problem, std::shared_ptr<mw::Problem>>(m, "Problem")
        .def_readonly("name", &mw::Problem::name)
        .def_property_readonly("dims",
                               [](const mw::Problem& p) {
                                   py::dict d;
                                   for (const auto& dim : p.dims)
                                       d[py::str(dim.name)] = dim.bound;
                                   return d;
                               })
        .def_property_readonly("tensors",
                               [](const mw::Problem& p) {
                                   std::vector<std::string> names;
                                   for (const auto& t : p.tensors)
                                       names.push_back(t.name);
                                   return names;
                               })
        .def_property_readonly("computes", &mw::Problem::computes)
        .def("to_dict", [](const mw::Problem& p) { return toPython(mw::toJson(p)); })
        .def("__repr__", [](const mw::Problem& p) {
            std::string s = "<Problem " + p.name + ":";
            for (const auto& d : p.dims)
                s += " " + d.name + "=" + std::to_string(d.bound);
            return s + ">";
        });

    py::class_<mw::Network>(m, "Network")
        .def_readonly("name", &mw::Network::name)
        .def_property_readonly("layers",
                               [](const mw::Network& n) {
                                   std::vector<std::string> names;
                                   for (const auto& l : n.layers)
                                       names.push_back(l.name);
                                   return names;
                               })
        .def("__len__", [](const mw::Network& n) { return n.layers.size(); })
        .def(
            "problem",
            [](const mw::Network& n, const py::object& key) {
                if (!key.is_none() && !py::isinstance<py::str>(key) &&
                    (!py::hasattr(key, "__index__") || py::isinstance<py::bool_>(key)))
                    throw mw::InputError(
                        "layer", "is a " +
                                     py::str(key.get_type().attr("__name__")).cast<std::string>() +
                                     "; expected a layer's name or index");
                if (!key.is_none() && !py::isinstance<py::str>(key)) { // int, NumPy integer
                    const mw::Json index = fromPython(key, "layer");
                    const auto i = index.is_number_integer() ? index.get<std::int64_t>() : -1;
                    if (i < 0 || i >= std::int64_t(n.layers.size()))
                        throw py::index_error("layer " + std::to_string(i) + " of " +
                                              std::to_string(n.layers.size()));
                    return std::make_shared<mw::Problem>(
                        mw::buildProblem(n.layers[std::size_t(i)]));
                }
                return std::make_shared<mw::Problem>(mw::buildProblem(
                    mw::selectLayer(n, key.is_none() ? std::string() : key.cast<std::string>())));
            },
            py::arg("layer") = py::none(),
            "A layer's problem, by name or index (the only layer when omitted).")
        .def("to_dict", [](const mw::Network& n) { return toPython(mw::toJson(n)); })
        .def("__repr__", [](const mw::Network& n) {
            return "<Network " + n.name + ": " + std::to_string(n.layers.size()) + " layers>";
        });

    m.def(
        "load_architecture",
        [](const py::object& src) {
            return load(
                src, "architecture",
                [](const std::string& p) {
                    return std::make_shared<mw::Architecture>(mw::loadArchitecture(p));
                },
                [](const mw::Json& j) {
                    return std::make_shared<mw::Architecture>(mw::architectureFromJson(j));
                });
        },
        py::arg("source"), "An architecture from a mapwright.architecture file or dict.");
    m.def(
        "load_network",
        [](const py::object& src, std::int64_t batch) {
            if (batch < 0 || batch > 1000000) // (the command line's --batch)
                throw mw::InputError("batch",
                                     "is " + std::to_string(batch) +
                                         "; expected 1 to 1000000, or 0 for the model's own");
            mw::OnnxImportOptions o;
            o.batch = batch;
            return load(
                src, "workload",
                [&](const std::string& p) {
                    std::vector<std::string> notes;
                    mw::Network n = mw::loadNetworkFile(p, o, &notes);
                    warnNotes(notes);
                    return n;
                },
                [](const mw::Json& j) { return mw::networkFromJson(j); });
        },
        py::arg("source"), py::arg("batch") = 0,
        "A network from a workload JSON file or dict, an ONNX model (batch fixes a dynamic "
        "one) or a Timeloop problem (one layer); what an import noted as UserWarnings.");
    m.def(
        "load_timeloop",
        [](const py::object& files) {
            std::vector<std::string> paths;
            if (isPath(files))
                paths.push_back(pathOf(files));
            else
                for (const auto& f : files)
                    paths.push_back(pathOf(py::reinterpret_borrow<py::object>(f)));
            mw::TimeloopCase c = mw::importTimeloop(paths);
            py::dict d;
            d["architecture"] = std::make_shared<mw::Architecture>(c.arch);
            d["problem"] = std::make_shared<mw::Problem>(c.problem);
            d["constraints"] = c.hasConstraints ? toPython(c.constraints) : py::none();
            auto space =
                Space::make(c.problem, c.arch, c.hasConstraints ? c.constraints : mw::Json());
            d["space"] = space;
            d["mapping"] = c.hasMapping ? py::cast(wrap(space, c.mapping)) : py::none();
            if (c.hasMapper) {
                py::dict mapper;
                mapper["searcher"] = c.mapper.searcher;
                mapper["objective"] = c.mapper.objective;
                d["mapper"] = mapper;
            } else {
                d["mapper"] = py::none();
            }
            d["notes"] = c.notes;
            return d;
        },
        py::arg("files"),
        "Timeloop YAML files merged as Timeloop merges them: a dict with architecture, problem, "
        "constraints, space, mapping, mapper and notes.");

    py::class_<PyMapping>(m, "Mapping", "A mapping of a map space (it keeps its space alive).")
        .def("to_dict",
             [](const PyMapping& pm) {
                 return toPython(mw::toJson(pm.mapping, pm.space->problem, pm.space->arch));
             })
        .def("loop_nest",
             [](const PyMapping& pm) {
                 return mw::renderLoopNest(pm.space->problem, pm.space->arch, pm.mapping);
             })
        .def("timeloop_yaml",
             [](const PyMapping& pm) {
                 return mw::timeloopMappingYaml(pm.space->problem, pm.space->arch, pm.mapping);
             })
        .def("encode", [](const PyMapping& pm) { return encodeArray(*pm.space, pm.mapping); })
        .def("__eq__",
             [](const PyMapping& a, const py::object& other) {
                 if (!py::isinstance<PyMapping>(other))
                     return false; // (m == None raised TypeError)
                 const PyMapping& b = other.cast<const PyMapping&>();
                 return a.space == b.space &&
                        a.space->space->hash(a.mapping) == b.space->space->hash(b.mapping);
             })
        .def("__hash__", [](const PyMapping& a) { return a.space->space->hash(a.mapping); })
        .def("__repr__", [](const PyMapping& pm) {
            return "<Mapping of " + pm.space->problem.name + " on " + pm.space->arch.name + ">";
        });

    using SpacePtr = std::shared_ptr<Space>;
    py::class_<Space, SpacePtr>(m, "MapSpace",
                                "Every mapping of a problem on an architecture, under constraints.")
        .def(py::init([](const mw::Problem& p, const mw::Architecture& a, const py::object& c) {
                 return Space::make(p, a, constraintsFrom(c, p, a));
             }),
             py::arg("problem"), py::arg("architecture"), py::arg("constraints") = py::none(),
             "constraints: None, a mapwright.constraints dict or file, or Timeloop YAML.")
        .def_property_readonly(
            "problem", [](const Space& s) { return std::make_shared<mw::Problem>(s.problem); })
        .def_property_readonly(
            "architecture",
            [](const Space& s) { return std::make_shared<mw::Architecture>(s.arch); })
        .def_property_readonly("constraints",
                               [](const Space& s) { return toPython(s.constraints); })
        .def(
            "size",
            [](const Space& s) {
                const mw::MapSpaceSize z = s.space->size();
                py::dict d;
                d["tiling"] = z.tiling;
                d["parallelism"] = z.parallelism;
                d["order"] = z.order;
                d["bypass"] = z.bypass;
                d["total"] = z.total();
                return d;
            },
            "log10 of the number of choices along each axis of the space.")
        .def("trivial",
             [](const SpacePtr& s) {
                 mw::Mapping t = mw::makeTrivialMapping(s->problem, s->arch);
                 s->space->applyFixed(t);
                 return wrap(s, t);
             })
        .def(
            "sample",
            [](const SpacePtr& s, mw::Rng& rng) { return wrap(s, s->space->sample(rng)); },
            py::arg("rng"), "A random mapping under the constraints (it may overflow a buffer).")
        .def(
            "sample_legal",
            [](const SpacePtr& s, mw::Rng& rng, int maxTries) -> py::object {
                mw::Mapping out;
                if (!s->space->sampleLegal(rng, out, scratch(), maxTries))
                    return py::none();
                return py::cast(wrap(s, out));
            },
            py::arg("rng"), py::arg("max_tries") = 100000)
        .def("is_legal",
             [](const Space& s, const PyMapping& pm) {
                 return s.space->isLegal(own(s, pm), scratch());
             })
        .def(
            "move",
            [](const SpacePtr& s, const PyMapping& pm, mw::Rng& rng,
               const std::string& kind) -> py::object {
                mw::Mapping m = own(*s, pm);
                const mw::MapSpace& sp = *s->space;
                bool moved = false;
                if (kind == "random")
                    moved = sp.randomMove(m, rng);
                else if (kind == "tile")
                    moved = sp.moveTileFactor(m, rng);
                else if (kind == "swap")
                    moved = sp.swapLoops(m, rng);
                else if (kind == "parallelism")
                    moved = sp.moveParallelism(m, rng);
                else if (kind == "bypass")
                    moved = sp.toggleBypass(m, rng);
                else if (kind == "grow")
                    moved = sp.growParallelism(m, rng);
                else if (kind == "drop")
                    moved = sp.dropParallelism(m, rng);
                else
                    throw mw::InputError("kind", "is '" + kind +
                                                     "'; expected random, tile, swap, parallelism, "
                                                     "bypass, grow or drop");
                return moved ? py::cast(wrap(s, m)) : py::none();
            },
            py::arg("mapping"), py::arg("rng"), py::arg("kind") = "random",
            "A neighbour by one of the searchers' moves, or None when it found nothing to change.")
        .def(
            "repair",
            [](const SpacePtr& s, const PyMapping& pm, mw::Rng& rng) -> py::object {
                mw::Mapping m = own(*s, pm);
                if (!s->space->repair(m, rng, scratch()))
                    return py::none();
                return py::cast(wrap(s, m));
            },
            py::arg("mapping"), py::arg("rng"), "A nearby legal mapping, or None.")
        .def(
            "mapping",
            [](const SpacePtr& s, const py::object& src) { return wrap(s, mappingFrom(*s, src)); },
            py::arg("source"), "A mapping from a mapwright.mapping file or dict.")
        .def_property_readonly("encoding_size", [](const Space& s) { return s.encoding->size(); })
        .def_property_readonly("encoding_bounds",
                               [](const Space& s) {
                                   const auto& b = s.encoding->bounds();
                                   return py::array_t<std::int64_t>(py::ssize_t(b.size()),
                                                                    b.data());
                               })
        .def_property_readonly("encoding_names", [](const Space& s) { return s.encoding->names(); })
        .def(
            "encode",
            [](const Space& s, const PyMapping& pm) { return encodeArray(s, own(s, pm)); },
            py::arg("mapping"))
        .def(
            "decode",
            [](const SpacePtr& s, const py::object& v) {
                return wrap(s, decodeArray(*s, encodedRows(v, "encoded mapping")));
            },
            py::arg("vector"))
        .def(
            "sample_encoded",
            [](const Space& s, std::size_t n, std::uint64_t seed, bool legal, int threads) {
                const int t = threadsOf(threads);
                const std::size_t w = s.encoding->size();
                py::array_t<std::int64_t> out({py::ssize_t(n), py::ssize_t(w)});
                std::int64_t* data = out.mutable_data();
                {
                    py::gil_scoped_release release;
                    auto range = [&](std::size_t begin, std::size_t end) {
                        mw::Evaluation e;
                        mw::Mapping m;
                        for (std::size_t i = begin; i < end; ++i) {
                            mw::Rng rng = mw::Rng::stream(seed, i);
                            if (!legal || !s.space->sampleLegal(rng, m, e, 100000))
                                m = s.space->sample(rng);
                            s.encoding->encode(m, data + i * w);
                        }
                    };
                    std::vector<std::thread> pool;
                    const std::size_t chunk = (n + std::size_t(t) - 1) / std::size_t(t);
                    for (int k = 0; k < t; ++k)
                        pool.emplace_back(range, std::min(n, std::size_t(k) * chunk),
                                          std::min(n, std::size_t(k + 1) * chunk));
                    for (auto& th : pool)
                        th.join();
                }
                return out;
            },
            py::arg("n"), py::arg("seed") = 1, py::arg("legal") = true, py::arg("threads") = 0,
            "n encoded mappings, row i drawn from the stream (seed, i): legal ones by rejection "
            "sampling when legal, else plain samples; reproducible whatever the threads.")
        .def(
            "evaluate",
            [](const Space& s, const PyMapping& pm, bool detail) {
                mw::Evaluation& e = scratch();
                s.space->model().evaluate(own(s, pm), e, *s.cache);
                return evaluationDict(s, e, detail);
            },
            py::arg("mapping"), py::arg("detail") = false,
            "The mapping's figures; with detail, everything `mapwright-cli evaluate --json` "
            "prints.")
        .def(
            "evaluate_batch",
            [](const Space& s, const py::object& given, int threads) {
                threadsOf(threads);
                const auto rows = encodedRows(given, "evaluate_batch rows");
                if (rows.ndim() != 2 || std::size_t(rows.shape(1)) != s.encoding->size())
                    throw mw::InputError("evaluate_batch",
                                         "rows have shape " + shapeText(rows) + "; expected (n, " +
                                             std::to_string(s.encoding->size()) + ")");
                const std::size_t n = std::size_t(rows.shape(0));
                py::array_t<double> energy{py::ssize_t(n)}, cycles{py::ssize_t(n)},
                    edp{py::ssize_t(n)};
                py::array_t<bool> valid{py::ssize_t(n)};
                const mw::EncodedFigures out{energy.mutable_data(), cycles.mutable_data(),
                                             edp.mutable_data(),
                                             reinterpret_cast<std::uint8_t*>(valid.mutable_data())};
                {
                    py::gil_scoped_release release;
                    mw::evaluateEncoded(*s.encoding, rows.data(), n, threads, out);
                }
                py::dict d;
                d["energy_pJ"] = energy;
                d["cycles"] = cycles;
                d["edp"] = edp;
                d["valid"] = valid;
                return d;
            },
            py::arg("rows"), py::arg("threads") = 0,
            "Encoded mappings (an (n, encoding_size) integer array) evaluated on `threads` threads "
            "(0: every core), the GIL released: arrays energy_pJ, cycles, edp (NaN where invalid) "
            "and valid.")
        .def(
            "lower_bound",
            [](const Space& s, const std::string& objective) {
                const mw::LowerBound b =
                    mw::lowerBound(s.problem, s.arch, mw::SearchObjective::parse(objective));
                py::dict d;
                d["energy_pJ"] = b.energy;
                d["cycles"] = b.cycles;
                d["edp"] = b.edp;
                d["objective"] = b.objective;
                return d;
            },
            py::arg("objective") = "edp", "What no legal mapping beats.")
        .def("__repr__", [](const Space& s) {
            return "<MapSpace " + s.problem.name + " on " + s.arch.name +
                   (s.constraints.is_null() ? "" : ", constrained") + ">";
        });

    m.def(
        "bench_model",
        [](const py::object& arch, int runs, double seconds) {
            // The command line's ranges: a run is at least a set of mappings,
            // so an endless one cannot be asked for.
            if (runs < 1 || runs > 1000)
                throw mw::InputError("runs", "is " + std::to_string(runs) +
                                                 "; expected 1 to 1000 (as the command line's)");
            if (!(seconds > 0 && seconds <= 3600))
                throw mw::InputError("seconds",
                                     "is " + py::str(py::float_(seconds)).cast<std::string>() +
                                         "; expected more than 0, at most 3600");
            const mw::Architecture a =
                py::isinstance<mw::Architecture>(arch)
                    ? arch.cast<mw::Architecture>()
                    : load(
                          arch, "architecture",
                          [](const std::string& p) { return mw::loadArchitecture(p); },
                          [](const mw::Json& j) { return mw::architectureFromJson(j); });
            mw::ModelBenchResult r;
            {
                py::gil_scoped_release release;
                r = mw::benchModel(a, runs, seconds);
            }
            py::dict d;
            d["evaluations_per_second"] = r.evaluationsPerSecond;
            d["min_per_second"] = r.minPerSecond;
            d["max_per_second"] = r.maxPerSecond;
            d["repeated_set_evaluations_per_second"] = r.repeatedSetPerSecond;
            d["runs"] = r.runs;
            return d;
        },
        py::arg("architecture"), py::arg("runs") = 5, py::arg("seconds") = 0.4,
        "`mapwright-cli bench model` in this process: the model's rate on one thread.");
}

} // namespace mwpy
