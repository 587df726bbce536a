#include "io/onnx_infer.h"

#include "common/error.h"
#include "common/helper_process.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <vector>

namespace mw {

namespace {

// The reply: 'M' and the inferred model, or 'E' and why inference failed.
constexpr char kModel = 'M';
constexpr char kError = 'E';

std::string helperPath() {
#ifdef MAPWRIGHT_ONNX_BUILD_PATH
    return findHelper("MAPWRIGHT_ONNX", "mapwright-onnx", MAPWRIGHT_ONNX_BUILD_PATH);
#else
    return findHelper("MAPWRIGHT_ONNX", "mapwright-onnx", nullptr);
#endif
}

} // namespace

std::string inferOnnxShapes(const std::string& model, const std::string& where) {
    const std::string helper = helperPath();
    if (helper.empty())
        throw InputError(where, "needs shape inference, and its helper mapwright-onnx was not "
                                "found beside the program (set MAPWRIGHT_ONNX to its path)");
    const HelperRun run = runHelper(helper, model.data(), model.size(), 60.0);
    if (run.outcome == HelperRun::Outcome::Overran)
        throw InputError(where, "shape inference ran a minute without finishing and was stopped");
    if (run.outcome != HelperRun::Outcome::Replied || run.reply.empty())
        throw InputError(where,
                         "shape inference failed: ONNX's library " +
                             (run.failure.empty() ? std::string("gave no answer") : run.failure) +
                             " on this graph; expected a well-formed model");
    const std::string body(run.reply.begin() + 1, run.reply.end());
    if (run.reply.front() == kError)
        throw InputError(where, "shape inference failed (" + body + ")");
    if (run.reply.front() != kModel)
        throw InputError(where, "shape inference gave a malformed answer");
    return body;
}

int runOnnxInferenceHelper(int in, int out) {
    std::vector<char> bytes;
    if (!readRequest(in, bytes))
        return 2;
    onnx::ModelProto model;
    std::string reply;
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        reply = std::string(1, kError) + "the model does not parse";
    } else {
        try {
            // The first inference error stops it: past one, ONNX 1.12 goes on
            // with nodes whose inputs have no type.
            onnx::ShapeInferenceOptions options;
            options.check_type = false;
            options.error_mode = 1;
            onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
            reply = std::string(1, kModel) + model.SerializeAsString();
        } catch (const std::exception& e) {
            std::string what = e.what();
            std::replace(what.begin(), what.end(), '\n', ' ');
            reply = std::string(1, kError) + what;
        }
    }
    return writeReply(out, reply.data(), reply.size()) ? 0 : 3;
}

} // namespace mw
