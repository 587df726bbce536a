#include "py_json.h"

#include "common/error.h"

namespace py = pybind11;

namespace mwpy {

py::object toPython(const mw::Json& j) {
    switch (j.type()) {
    case mw::Json::value_t::null:
        return py::none();
    case mw::Json::value_t::boolean:
        return py::bool_(j.get<bool>());
    case mw::Json::value_t::number_integer:
        return py::int_(j.get<std::int64_t>());
    case mw::Json::value_t::number_unsigned:
        return py::int_(j.get<std::uint64_t>());
    case mw::Json::value_t::number_float:
        return py::float_(j.get<double>());
    case mw::Json::value_t::string:
        return py::str(j.get_ref<const std::string&>());
    case mw::Json::value_t::array: {
        py::list l;
        for (const auto& v : j)
            l.append(toPython(v));
        return l;
    }
    case mw::Json::value_t::object: {
        py::dict d;
        for (const auto& [k, v] : j.items())
            d[py::str(k)] = toPython(v);
        return d;
    }
    default:
        return py::none();
    }
}

namespace {

// Deeper than any Mapwright format goes; a dict that holds itself stops here
// instead of at the end of the stack.
constexpr int kMaxDepth = 256;

std::string typeNameOf(const py::handle& o) {
    return py::str(o.get_type().attr("__name__")).cast<std::string>();
}

mw::Json fromPythonAt(const py::handle& o, const std::string& where, int depth) {
    if (depth > kMaxDepth)
        throw mw::InputError(where, "is nested deeper than " + std::to_string(kMaxDepth) +
                                        " levels (a dict or list that holds itself?)");
    if (o.is_none())
        return nullptr;
    if (py::isinstance<py::bool_>(o))
        return o.cast<bool>();
    if (py::isinstance<py::int_>(o)) {
        // (A Python int may exceed 64 bits; casting it threw a bare RuntimeError.)
        const py::int_ value = py::reinterpret_borrow<py::int_>(o);
        long long v = PyLong_AsLongLong(value.ptr());
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            throw mw::InputError(where, "is " + py::str(o).cast<std::string>() +
                                            "; expected an integer within 64 bits");
        }
        return std::int64_t(v);
    }
    if (py::isinstance<py::float_>(o))
        return o.cast<double>();
    if (py::isinstance<py::str>(o))
        return o.cast<std::string>();
    if (py::isinstance<py::dict>(o)) {
        mw::Json j = mw::Json::object();
        for (const auto& [k, v] : o.cast<py::dict>()) {
            if (!py::isinstance<py::str>(k))
                throw mw::InputError(where,
                                     "has a key that is not a string; expected a JSON object");
            const std::string key = k.cast<std::string>();
            j[key] = fromPythonAt(v, where + "." + key, depth + 1);
        }
        return j;
    }
    if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
        mw::Json j = mw::Json::array();
        std::size_t i = 0;
        for (const auto& v : o)
            j.push_back(fromPythonAt(v, where + "[" + std::to_string(i++) + "]", depth + 1));
        return j;
    }
    // NumPy scalars and anything else number-like (a NumPy array has
    // __index__ too, and raises there).
    try {
        if (py::hasattr(o, "__index__"))
            return fromPythonAt(o.attr("__index__")(), where, depth + 1);
        if (py::hasattr(o, "__float__"))
            return o.attr("__float__")().cast<double>();
    } catch (const py::error_already_set&) {
    } catch (const py::cast_error&) {
    }
    throw mw::InputError(where, "is a " + typeNameOf(o) +
                                    "; expected a JSON value (dict, list, str, number, bool, "
                                    "None)");
}

} // namespace

mw::Json fromPython(const py::handle& o, const std::string& where) {
    return fromPythonAt(o, where, 0);
}

} // namespace mwpy
