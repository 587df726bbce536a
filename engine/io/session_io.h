#pragma once
// A session: the architecture, the workload (a network) and the searches of one
// exploration, saved as one JSON file ("mapwright.session"). Finished runs keep
// their settings, best mapping and trace; requested runs (no result yet) are
// what a scripted screenshot runs before it renders.
#include "arch/architecture.h"
#include "io/json_io.h"
#include "io/timeloop/timeloop.h"
#include "search/search.h"
#include "workload/presets.h"

#include <string>
#include <vector>

namespace mw {

// The searcher name of a run that holds a mapping given by the user (a
// Timeloop mapping.yaml, say), not one a searcher found.
inline constexpr const char* kImportedRun = "imported";

struct SessionRun {
    std::string searcher; // a searcher's name, or kImportedRun
    std::string layer;    // name of the network layer searched
    SearchSettings settings;
    bool finished = false; // false: requested, not run yet
    SearchResult result;   // when finished (bestEvaluation is recomputed on load)
    Json constraints;      // the mapwright.constraints it ran under; null: none
    // Why the run no longer fits the design as it now is (its layer removed
    // or reshaped, its mapping illegal on the architecture); empty: it fits.
    // A stale run keeps the figures it was last computed with and is neither
    // drawn nor counted as a best. Worked out from the design; saved, so that a
    // session whose runs no longer fit it still opens (their layer may be gone).
    std::string stale;
    // What it searched: designFingerprint of the architecture and its layer
    // when it started; empty when not known (sessions saved before it was
    // kept). Once the design differs, the run's curve and any optimum it
    // proved are another design's (its best is re-costed, or it is stale).
    std::string design;
};

// A short digest of an architecture and one of its network's layers (their
// JSON), the same for equal designs in any run of the program. One per layer
// of `network`, in its order.
std::string designFingerprint(const Architecture& a, const LayerSpec& layer);
std::vector<std::string> designFingerprints(const Architecture& a, const Network& network);

// How the search chart was left: its x axis (evaluations or wall time) and
// whether that axis is logarithmic (a proof's or a long run's hundreds of
// thousands of evaluations beside others' thousands).
struct SessionView {
    bool searchSeconds = false;
    bool searchLogX = false;
};

struct Session {
    std::string name;
    Architecture arch;
    Network network;
    int currentLayer = 0;
    // The map-space constraints new searches run under (mapwright.constraints,
    // by level and dimension name); null: none.
    Json constraints;
    std::vector<SessionRun> runs;
    SessionView view;
};

// The search settings a Timeloop mapper section asks for (its algorithm's
// searcher with its victory, timeout and permutations; a minute's budget
// unless it gives a search size).
SearchSettings searchSettingsFromMapper(const TimeloopMapper& m);
// A session of a Timeloop case: its architecture, its problem as a one-layer
// workload, its constraints; its mapping as a finished kImportedRun run, and
// the mapper's search as a requested run.
Session sessionFromTimeloop(const TimeloopCase& c);

Json toJson(const Session& s);
// `where` names the source (a file) in errors.
Session sessionFromJson(const Json& j, const std::string& where);
Session loadSession(const std::string& path);
void saveSession(const std::string& path, const Session& s);

// The trace as CSV: evaluation,seconds,cost,best ("inf" before the first legal point).
std::string traceCsv(const SearchResult& r);

} // namespace mw
