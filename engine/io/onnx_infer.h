#pragma once
// ONNX's shape inference, run in a helper program (mapwright-onnx, see
// common/helper_process.h): the library (ONNX 1.12 in Debian 12) dereferences
// null types on some malformed graphs, and a crash there must cost only the
// import, not the program and the user's session.
#include <string>

namespace mw {

// The model (serialized ModelProto) with the shapes ONNX infers filled in;
// an InputError naming `where` when inference fails or the helper does.
std::string inferOnnxShapes(const std::string& model, const std::string& where);

// The helper's main: a model on `in`, the inferred model (or why not) on `out`.
int runOnnxInferenceHelper(int in, int out);

} // namespace mw
