#pragma once
// The objects the Python module hands out. A map space owns its problem and
// architecture (the engine's MapSpace points at them), and every mapping keeps
// its space alive, so a mapping always knows how to describe itself.
#include "arch/architecture.h"
#include "io/json_io.h"
#include "mapspace/encoding.h"
#include "mapspace/mapspace.h"
#include "search/search.h"
#include "workload/presets.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>

namespace mwpy {

struct Space {
    mw::Problem problem;
    mw::Architecture arch;
    mw::Json constraints; // as mapwright.constraints; null: none
    std::unique_ptr<mw::MapSpace> space;
    std::unique_ptr<mw::MappingEncoding> encoding;
    // evaluate()'s: a script's next mapping is often a move from its last
    // (calls hold the GIL, so one per space is enough).
    std::unique_ptr<mw::EvaluationCache> cache = std::make_unique<mw::EvaluationCache>();

    // Built in place: the MapSpace keeps pointers to problem and arch.
    static std::shared_ptr<Space> make(mw::Problem p, mw::Architecture a, mw::Json constraints);
    // The same space as an engine MapSpace made elsewhere (a GUI search's).
    static std::shared_ptr<Space> like(const mw::MapSpace& other);
};

// A Python object with run(ctx) as the driver's Searcher. It runs with the
// GIL held; its space is `space`, or the driver's when null.
class PythonSearcher : public mw::Searcher {
  public:
    PythonSearcher(pybind11::object searcher, std::shared_ptr<Space> space);
    ~PythonSearcher() override; // takes the GIL to let go of the object
    void run(mw::SearchContext& ctx) override;

  private:
    pybind11::object searcher_;
    std::shared_ptr<Space> space_;
};

struct PyMapping {
    mw::Mapping mapping;
    std::shared_ptr<const Space> space;
};

// m's mapping, when it is a mapping of s (or of a space of the same problem
// and architecture); otherwise an InputError.
const mw::Mapping& own(const Space& s, const PyMapping& m);

// Encoded mappings as an int64 array: integer or bool arrays as they are,
// float arrays when every value is whole (a fraction is an InputError naming
// `what`: NumPy's cast would drop it in silence, and 1e30 would wrap).
pybind11::array_t<std::int64_t, pybind11::array::c_style> encodedRows(const pybind11::object& rows,
                                                                      const char* what);

// The evaluation of a mapping: its top-level figures (valid, violations,
// cycles, energy_pJ, utilization, edp, computes), or with detail everything
// `mapwright-cli evaluate --json` prints.
pybind11::dict evaluationDict(const Space& s, const mw::Evaluation& e, bool detail);

void bindModel(pybind11::module_& m);  // loaders, MapSpace, Mapping, evaluation
void bindSearch(pybind11::module_& m); // the driver, built-in and Python searchers
void bindGui(pybind11::module_& m);    // the explorer, with the registered searchers

} // namespace mwpy
