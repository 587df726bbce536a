// Timeloop's problem: a shape (dimensions, coefficients, data spaces with
// projections in the long or short form) and an instance (the bounds), or the
// built-in CNN layer shape by name.
#include "io/timeloop/yaml.h"
#include "workload/presets.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

namespace mw::timeloop_read {

namespace {

using namespace timeloop_yaml;

// Timeloop's problem-shapes/cnn-layer.yaml, the shape most problem files name.
std::vector<TensorSpec> cnnLayerTensors() {
    auto t = [](const char* d) {
        return std::vector<std::pair<std::string, std::int64_t>>{{d, 1}};
    };
    TensorSpec w{"Weights", {t("C"), t("M"), t("R"), t("S")}, false};
    TensorSpec in{"Inputs",
                  {t("N"), t("C"), {{"R", 0}, {"P", 0}}, {{"S", 0}, {"Q", 0}}},
                  false}; // coefficients filled in by the caller
    TensorSpec out{"Outputs", {t("N"), t("M"), t("Q"), t("P")}, true};
    return {w, in, out};
}

// Instance values override coefficient defaults (strides, dilations).
void applyInstanceCoefficients(std::map<std::string, std::int64_t>& coef, const YAML::Node& inst,
                               const std::string& file) {
    for (auto& [k, v] : coef) {
        const YAML::Node n = child(inst, k);
        if (given(n))
            v = scalarAs<std::int64_t>(n, at(file, n) + ": problem.instance." + k, "an integer");
    }
}

} // namespace

Problem readProblem(const Spec& spec, std::vector<std::string>& notes) {
    const Spec::Entry* entry = spec.find({"problem"});
    if (!entry)
        throw InputError(spec.keys.empty() ? std::string("Timeloop input")
                                           : spec.keys.begin()->second.file,
                         "missing 'problem'; expected the workload as problem: {shape, instance}");
    const std::string& file = entry->file;
    const YAML::Node& prob = entry->node;
    const YAML::Node shape = child(prob, "shape");
    const YAML::Node inst = child(prob, "instance");
    if (!given(shape) || !given(inst) || !inst.IsMap())
        throw InputError(at(file, prob) + ": problem", "expected 'shape' and 'instance'");
    const std::string iw = at(file, inst) + ": problem.instance";

    std::vector<std::string> dimNames;
    std::map<std::string, std::int64_t> coef;
    std::vector<TensorSpec> tensors;
    // Unnamed shapes take their file's name ("resnet18/01" for a layer file
    // named by its number alone).
    const std::filesystem::path path(file);
    std::string name = path.stem().string().empty() ? "problem" : path.stem().string();
    if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0])) &&
        !path.parent_path().filename().empty())
        name = path.parent_path().filename().string() + "/" + name;
    if (shape.IsScalar()) {
        const std::string s = lowercase(shape.Scalar());
        if (s != "cnn-layer" && s != "cnn_layer")
            throw InputError(at(file, shape) + ": problem.shape",
                             "names the built-in shape '" + shape.Scalar() +
                                 "'; expected cnn-layer or the shape written out");
        dimNames = {"C", "M", "R", "S", "N", "P", "Q"};
        for (const char* c : {"Wstride", "Hstride", "Wdilation", "Hdilation"})
            coef[c] = 1;
        name = "cnn-layer";
        tensors = cnnLayerTensors();
    } else {
        const std::string sw = at(file, shape) + ": problem.shape";
        if (given(child(shape, "name"))) {
            const std::string shapeName = text(child(shape, "name"), sw + ".name");
            if (!isBlankLayerName(shapeName)) // (a blank one keeps the file's)
                name = shapeName;
        }
        const YAML::Node coefficients = child(shape, "coefficients");
        if (given(coefficients)) {
            if (!coefficients.IsSequence())
                throw InputError(sw + ".coefficients", "expected a list of {name, default}");
            for (const auto& c : coefficients) {
                const std::string cw = at(file, c) + ": problem.shape.coefficients";
                const std::string cn = text(child(c, "name"), cw + ".name");
                const YAML::Node d = child(c, "default");
                coef[cn] = given(d) ? scalarAs<std::int64_t>(d, cw + "." + cn, "an integer") : 1;
            }
        }
        // The instance's values replace the defaults before any projection
        // term reads a coefficient: a term holds the product, not the name.
        applyInstanceCoefficients(coef, inst, file);
        const YAML::Node dims = child(shape, "dimensions");
        if (!given(dims) || !dims.IsSequence() || dims.size() == 0)
            throw InputError(sw + ".dimensions", "expected a list of dimension names");
        for (const auto& d : dims)
            dimNames.push_back(text(d, sw + ".dimensions"));
        const YAML::Node spaces = child(shape, "data_spaces");
        if (!given(spaces) || !spaces.IsSequence())
            throw InputError(sw + ".data_spaces", "expected a list of data spaces");
        for (const auto& ds : spaces) {
            const std::string dw = at(file, ds) + ": problem.shape.data_spaces";
            TensorSpec spec;
            spec.name = text(child(ds, "name"), dw + ".name");
            const YAML::Node rw = child(ds, "read_write");
            spec.readWrite = given(rw) && scalarAs<bool>(rw, dw + "." + spec.name + ".read_write",
                                                         "true or false");
            const YAML::Node projection = child(ds, "projection");
            if (!given(projection) || !projection.IsSequence())
                throw InputError(dw + "." + spec.name + ".projection",
                                 "expected a list of ranks, each a list of [dimension, "
                                 "coefficient] terms");
            for (const auto& rank : projection) {
                const std::string rwhere =
                    at(file, rank) + ": problem.shape.data_spaces." + spec.name + ".projection";
                std::vector<std::pair<std::string, std::int64_t>> terms;
                auto term = [&](const YAML::Node& t) {
                    if (t.IsScalar()) { // a bare dimension name
                        terms.emplace_back(t.Scalar(), 1);
                        return;
                    }
                    // (Timeloop asserts on a term of three entries or more:
                    // refused, not read as a product.)
                    if (!t.IsSequence() || t.size() == 0 || t.size() > 2)
                        throw InputError(rwhere, "a term of " + std::to_string(t.size()) +
                                                     " entries; expected [dimension] or "
                                                     "[dimension, coefficient]");
                    const std::string dim = text(t[0], rwhere);
                    std::int64_t c = 1;
                    if (t.size() == 2) {
                        const std::string cn = text(t[1], rwhere);
                        const auto it = coef.find(cn);
                        if (it == coef.end())
                            throw InputError(rwhere, "unknown coefficient '" + cn +
                                                         "'; expected one of shape.coefficients");
                        c = it->second;
                    }
                    terms.emplace_back(dim, c);
                };
                if (rank.IsScalar()) // the flat form: one dimension per rank
                    term(rank);
                else if (rank.IsSequence())
                    for (const auto& t : rank)
                        term(t);
                else
                    throw InputError(rwhere, "expected a rank as a list of terms");
                spec.ranks.push_back(terms);
            }
            tensors.push_back(spec);
        }
    }
    if (shape.IsScalar()) { // the CNN layer's input projection, with its coefficients
        applyInstanceCoefficients(coef, inst, file);
        tensors[1].ranks[2] = {{"R", coef["Wdilation"]}, {"P", coef["Wstride"]}};
        tensors[1].ranks[3] = {{"S", coef["Hdilation"]}, {"Q", coef["Hstride"]}};
    }
    std::vector<Dimension> dims;
    for (const auto& dn : dimNames) {
        const YAML::Node b = child(inst, dn);
        std::int64_t bound = 1;
        if (given(b))
            bound = scalarAs<std::int64_t>(b, at(file, b) + ": problem.instance." + dn,
                                           "an integer bound");
        if (bound <= 0)
            throw InputError(iw + "." + dn,
                             "is " + std::to_string(bound) + "; expected a positive integer");
        dims.push_back({dn, bound});
    }
    // Timeloop ignores instance keys that are neither dimensions nor
    // coefficients (its own dumps carry H, W, Hpad, Wpad): so do we, saying so,
    // and naming the coefficient a key differs from only in case (layer files
    // that write HStride for the shape's Hstride are evaluated unstrided).
    std::string ignored;
    for (const auto& kv : inst) {
        const std::string key = kv.first.Scalar();
        if (key == "densities") {
            if (kv.second.IsMap() && kv.second.size() > 0)
                notes.push_back(at(file, kv.first) +
                                ": problem.instance.densities ignored: sparsity is not modelled "
                                "(the layer is evaluated dense)");
            continue;
        }
        if (std::find(dimNames.begin(), dimNames.end(), key) != dimNames.end() || coef.count(key))
            continue;
        std::string meant;
        for (const auto& name : dimNames)
            if (lowercase(name) == lowercase(key))
                meant = name;
        for (const auto& [name, value] : coef)
            if (lowercase(name) == lowercase(key))
                meant = name;
        if (!meant.empty())
            notes.push_back(at(file, kv.first) + ": problem.instance." + key +
                            " ignored, as Timeloop ignores it (names are case-sensitive); the "
                            "shape's '" +
                            meant + "' stays " +
                            std::to_string(coef.count(meant) ? coef[meant] : 1) + ": write '" +
                            meant + "' to set it");
        else
            ignored += (ignored.empty() ? "" : ", ") + key;
    }
    if (!ignored.empty())
        notes.push_back(file + ": problem.instance keys " + ignored +
                        " are neither dimensions nor coefficients of the shape: ignored, as "
                        "Timeloop ignores them");
    std::vector<std::pair<std::string, std::int64_t>> coefs(coef.begin(), coef.end());
    try {
        return makeProblem(name, dims, tensors, coefs);
    } catch (const InputError& e) {
        throw e.within(file);
    }
}

} // namespace mw::timeloop_read
