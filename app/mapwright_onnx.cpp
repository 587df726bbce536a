// mapwright-onnx: ONNX's shape inference for one model per process (see
// engine/io/onnx_infer.h). Reads a model on stdin, writes it inferred on stdout.
#include "io/onnx_infer.h"

#include <unistd.h>

int main() {
    return mw::runOnnxInferenceHelper(STDIN_FILENO, STDOUT_FILENO);
}
