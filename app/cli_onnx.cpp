// import-onnx: a framework's network as a Mapwright network.
#include "cli_common.h"
#include "io/onnx_import.h"

#include <iomanip>
#include <iostream>
#include <sstream>

namespace cli {

namespace {

// A layer's shape in one line: its preset's parameters, or its dimensions.
std::string shapeSummary(const mw::LayerSpec& l) {
    std::ostringstream s;
    if (l.kind == "custom") {
        for (const auto& d : l.custom.dims)
            s << d.name << "=" << d.bound << " ";
    } else {
        for (const auto& [k, v] : l.params)
            if (v != 1 || k == "N")
                s << k << "=" << v << " ";
    }
    std::string t = s.str();
    if (!t.empty())
        t.pop_back();
    return t;
}

} // namespace

mw::OnnxImportOptions onnxOptions(const Args& args) {
    mw::OnnxImportOptions options;
    if (args.has("batch"))
        options.batch = wholeNumber(args, "batch", 1, 1, 1000000);
    return options;
}

mw::Network loadWorkload(const Args& args) {
    std::vector<std::string> notes;
    mw::Network net = mw::loadNetworkFile(args.get("workload"), onnxOptions(args), &notes);
    for (const auto& n : notes)
        std::cerr << "note: " << n << "\n";
    return net;
}

int cmdImportOnnx(const Args& args) {
    if (args.positional.size() != 1)
        throw InputError("import-onnx", "expected MODEL.onnx --out NET.json [--batch N]");
    const mw::OnnxImportOptions options = onnxOptions(args);
    const std::string out = outputFile(args);
    const mw::OnnxImport r = mw::importOnnx(args.positional[0], options);
    mw::writeTextFile(out, mw::toJson(r.network).dump(1) + "\n");
    std::cout << "wrote " << out << ": " << r.network.layers.size() << " layers ("
              << r.distinctShapes << " distinct shapes) from " << args.positional[0] << " in "
              << std::fixed << std::setprecision(3) << r.seconds << " s\n";
    for (const auto& [role, count] : r.roleCounts)
        std::cout << "  " << std::setw(4) << count << " " << role << "\n";
    if (!r.skipped.empty()) {
        std::cout << "skipped:";
        for (const auto& [op, count] : r.skipped)
            std::cout << " " << op << " x" << count;
        std::cout << "\n";
    }
    for (const auto& n : r.notes)
        std::cout << "note: " << n << "\n";
    std::cout << std::left << std::setw(36) << "layer" << std::setw(26) << "role" << std::setw(60)
              << "shape"
              << "ONNX name\n";
    for (std::size_t i = 0; i < r.network.layers.size(); ++i) {
        const mw::LayerSpec& l = r.network.layers[i];
        std::cout << std::setw(36) << l.name << std::setw(26) << r.roles[i] << std::setw(60)
                  << shapeSummary(l) << l.source << "\n";
    }
    return 0;
}

} // namespace cli
