// ONNX models: read with ONNX's library (its protobuf parser and shape
// inference) and turned into a network, with and without a batch given; the
// network written back as JSON reads again to the same file.
#include "fuzz_common.h"

#include "io/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes = fuzz::text(data, size);
    for (const std::int64_t batch : {0, 3})
        fuzz::expectInputErrors([&] {
            mw::OnnxImportOptions o;
            o.batch = batch;
            const mw::OnnxImport r = mw::importOnnxBytes(bytes, "fuzz.onnx", o);
            const mw::Json written = mw::toJson(r.network);
            if (mw::toJson(mw::networkFromJson(written)) != written)
                __builtin_trap();
        });
    return 0;
}
