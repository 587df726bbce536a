#pragma once
// Mapwright's JSON values as Python objects and back: dicts, lists, str, int,
// float, bool and None, so files and Python dicts are the same formats.
#include "io/json_io.h"

#include <pybind11/pybind11.h>

namespace mwpy {

pybind11::object toPython(const mw::Json& j);
// A Python value as JSON; `where` names it in the ValueError for anything
// else (a set, an object).
mw::Json fromPython(const pybind11::handle& o, const std::string& where);

} // namespace mwpy
