#pragma once
// Running a sweep: each design point a whole-network search (io/network
// search), points handed out dynamically to whoever is free (local threads,
// or MPI ranks in the CLI), a chain's points in order so that each is warm
// started from its predecessor's mappings. A point depends only on the sweep,
// its values and its predecessor's stored record, so any distribution of the
// points, and a resumed sweep, gives the same results.
#include "explore/design_space.h"

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mw {

struct LayerRecord {
    std::string name;
    int sameAs = -1; // the identical layer searched instead
    bool found = false;
    double energy = 0.0; // pJ
    double cycles = 0.0;
    double edp = 0.0;
    std::int64_t evaluations = 0;
    Json mapping; // mapwright.mapping of the best mapping; null when none
};

struct PointRecord {
    int index = 0;
    std::vector<std::string> values; // one per axis
    bool valid = false;
    std::string reason;  // why not valid
    Json architecture;   // the point's architecture (estimated); null when invalid
    double energy = 0.0; // pJ, the whole network
    double cycles = 0.0;
    double edp = 0.0;  // J x cycles
    double area = 0.0; // um^2 on chip
    std::int64_t evaluations = 0;
    double seconds = 0.0; // wall time (the one figure that differs between runs)
    int warmFrom = -1;    // the point its searches started from
    std::vector<LayerRecord> layers;
    // The sweep's params none of this point's searches read (misspelt, or
    // another searcher's): for a note, not stored.
    std::vector<std::string> unreadParams;
};

Json toJson(const PointRecord& r);
PointRecord pointRecordFromJson(const Json& j, const std::string& where);

// One point: its architecture, then the network search (warm started between
// layers, and from `predecessor`'s mappings where given). A combination that
// is not a design, or a layer with no legal mapping, makes an invalid record
// with the reason. nullopt when cancelled before the point finished.
std::optional<PointRecord> evaluateDesignPoint(const SweepSpec& s, const DesignPoint& p,
                                               const PointRecord* predecessor,
                                               const std::atomic<bool>* cancel = nullptr);

// The searcher's parameters tried before any point is searched: the searcher
// runs briefly (one evaluation, at most a second) on the first layer of the
// first point that is a design, so that a value it refuses stops the sweep in
// one InputError placed at whereOfParam(name), rather than making every point
// invalid. (A parameter read only later in a search is checked there.)
void checkSweepParams(const SweepSpec& s,
                      const std::function<std::string(const std::string&)>& whereOfParam);

// Which points may start: those not done whose predecessor is done (or who
// have none), lowest index first.
class SweepSchedule {
  public:
    SweepSchedule(std::vector<DesignPoint> points, const std::set<int>& done);
    std::optional<DesignPoint> next(); // a ready point, now marked running
    void finished(int index);
    void abandoned(int index); // it goes back to the ready points
    bool complete() const { return remaining_ == 0; }
    int remaining() const { return remaining_; }
    int total() const { return static_cast<int>(points_.size()); }

  private:
    std::vector<DesignPoint> points_;
    std::map<int, std::size_t> byIndex_;
    std::set<int> done_, running_;
    int remaining_ = 0;
};

struct SweepRunOptions {
    int threads = 1;  // points evaluated at once
    SweepShard shard; // the points of this shard only
};

// Runs the points not in `finished` (a resumed sweep's), on options.threads
// threads; `onPoint` is called on the calling thread as each finishes, in
// the order they finish (write it to the database there). Returns false when
// cancelled (points in flight are dropped).
bool runSweep(const SweepSpec& s, const std::map<int, PointRecord>& finished,
              const SweepRunOptions& options,
              const std::function<void(const PointRecord&)>& onPoint,
              const std::atomic<bool>* cancel = nullptr);

// The points of a sweep (and shard) that are not yet in `finished`.
std::vector<DesignPoint> pendingPoints(const SweepSpec& s, const SweepShard& shard,
                                       const std::map<int, PointRecord>& finished);

} // namespace mw
