#pragma once
// Mapwright's JSON files. Each carries "format" and "version"; readers report
// errors as InputError naming the file, the JSON path and what was expected.
#include "arch/architecture.h"
#include "common/json.h"
#include "mapping/mapping.h"
#include "mapspace/mapspace.h"
#include "model/evaluation.h"
#include "workload/presets.h"

#include <cstddef>
#include <string>
#include <vector>

namespace mw {

inline constexpr int kFormatVersion = 1;

Json toJson(const Architecture& a);
Architecture architectureFromJson(const Json& j);

Json toJson(const Problem& p); // a custom problem (dimensions, tensors)
Problem problemFromJson(const Json& j, const std::string& where);

// A workload file is a network: one or more named layers. Also reads the
// layer-shape files of ../shared/workloads (no format field, same names).
Json toJson(const Network& n);
Network networkFromJson(const Json& j);

Json toJson(const Mapping& m, const Problem& p, const Architecture& a);
Mapping mappingFromJson(const Json& j, const Problem& p, const Architecture& a);

Json toJson(const Evaluation& e, const Problem& p, const Architecture& a);
Evaluation evaluationFromJson(const Json& j, const Problem& p, const Architecture& a);

// Map-space constraints (mapwright.constraints) by level name, per level:
//  "temporal" {dim: factor}: fixed temporal factors (0: the whole dimension,
//    as Timeloop reads it);
//  "order" [dims, outer to inner]: the loop order; "*" stands for the dims it
//    leaves out, in any order (["*", "N"]: N innermost); without "*" the
//    dims left out go innermost in the problem's order;
//  "spatial_order": the same for the spatial loops (X and Y together);
//  "keep" / "bypass" [tensors];
//  "spatial_dims" [dims that may fan out], "spatial_dims_x" / "spatial_dims_y"
//    [dims that may fan out on that axis only];
//  "spatial_x" / "spatial_y" {dim: factor}: fixed spatial factors;
// and top-level "min_spatial_utilization" (0..1). Dimensions the problem does
// not have are ignored, so one file serves conv layers with and without
// groups; a level the architecture does not have, an unknown tensor, and
// contradictions within a level (a tensor kept and bypassed) are errors.
MapSpaceConstraints constraintsFromJson(const Json& j, const Problem& p, const Architecture& a);
// A constraints file as a mapwright.constraints JSON, checked against p and
// a: ours, or Timeloop's (by its name, isTimeloopFileName: its
// architecture_constraints and mapspace_constraints, a template rendered
// without parse data), whose import says in `notes` what it dropped or doubts.
Json readConstraintsFile(const std::string& path, const Problem& p, const Architecture& a,
                         std::vector<std::string>& notes);
// Notes for each dimension name of mapwright.constraints `j` that p lacks:
// ignored by design (one file serves conv layers and GEMMs), but a typo
// would otherwise change nothing without a word.
void noteUnknownDimensions(const Json& j, const Problem& p, std::vector<std::string>& notes);
// The same, read. Callers that face users pass `notes` and show them.
MapSpaceConstraints loadConstraints(const std::string& path, const Problem& p,
                                    const Architecture& a,
                                    std::vector<std::string>* notes = nullptr);

// Files. Errors are prefixed with the path; a Timeloop file's name
// (isTimeloopFileName) on text that is not JSON says how to convert it.
Json readJsonFile(const std::string& path);
// (JSON text: parseJsonText, common/json.h.)
// Written atomically (common/atomic_file.h): the old file stays if writing fails.
void writeTextFile(const std::string& path, const std::string& text);
// A file whole, of at most maxBytes (a folder, or more, is an InputError).
// 512 MiB serves every text format; an ONNX model may hold its weights, up
// to protobuf's 2 GiB.
inline constexpr std::size_t kMaxTextFileBytes = std::size_t(512) << 20;
inline constexpr std::size_t kMaxOnnxFileBytes = std::size_t(2) << 30;
std::string readTextFile(const std::string& path, std::size_t maxBytes = kMaxTextFileBytes);
Architecture loadArchitecture(const std::string& path);
Network loadNetwork(const std::string& path);
// Our JSON, or a Timeloop mapping (isTimeloopFileName: mapping.yaml, the
// mapper's map.yaml) read by level names; what reading it notes (a key given
// twice) goes to notes, when given.
Mapping loadMapping(const std::string& path, const Problem& p, const Architecture& a,
                    std::vector<std::string>* notes = nullptr);

// The layer of a network by name (or by the name it was imported under, see
// Network::findLayer), or its only layer when name is empty.
const LayerSpec& selectLayer(const Network& n, const std::string& name);

} // namespace mw
