// The mapwright Python module's native part, _mapwright (see mapwright/__init__.py).
#include "common/error.h"
#include "py_types.h"

#include <pybind11/pybind11.h>

PYBIND11_MODULE(_mapwright, m) {
    m.doc() = "Mapwright's engine: architectures, workloads, map spaces, the cost model and "
              "the search driver.";
    // Bad input raises ValueError with the one-line message the CLI prints.
    pybind11::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p)
                std::rethrow_exception(p);
        } catch (const mw::InputError& e) {
            // A message quoting a file's bytes may not be UTF-8: those are
            // replaced (PyErr_SetString would raise an empty ValueError).
            const std::string what = e.what();
            PyObject* text = PyUnicode_DecodeUTF8(what.data(), Py_ssize_t(what.size()), "replace");
            PyErr_SetObject(PyExc_ValueError, text);
            Py_XDECREF(text);
        }
    });
    mwpy::bindModel(m);
    mwpy::bindSearch(m);
    mwpy::bindGui(m);
}
