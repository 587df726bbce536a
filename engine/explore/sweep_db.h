#pragma once
// A sweep's results in SQLite: the sweep itself (its JSON, so the database
// alone says what was run), one row per point and one per point and layer,
// each point written in one transaction as it finishes, so a killed sweep
// loses only the points in flight. Tables (for users' own queries):
//   sweep(key, value)         "format", "version", "spec" (the sweep's JSON), "shard"
//   points(id, valid, reason, energy_pJ, cycles, edp, area_um2, evaluations,
//          seconds, warm_from, architecture)
//   point_values(point, parameter, value)
//   layers(point, layer, name, same_as, found, energy_pJ, cycles, edp,
//          evaluations, mapping)
#include "explore/sweep_run.h"

#include <map>
#include <memory>
#include <string>

struct sqlite3;

namespace mw {

class SweepDatabase {
  public:
    // A new database for `spec` at path; or, with resume, the one there if it
    // holds the same sweep (and shard). Refuses to overwrite a database that
    // holds points unless resuming: what a user computed is never lost.
    static SweepDatabase create(const std::string& path, const Json& spec, const std::string& shard,
                                bool resume);
    // An existing database, read-only unless `writable`.
    static SweepDatabase open(const std::string& path, bool writable = false);

    SweepDatabase(SweepDatabase&&) noexcept;
    SweepDatabase& operator=(SweepDatabase&&) noexcept;
    ~SweepDatabase();

    const std::string& path() const { return path_; }
    const Json& spec() const { return spec_; }
    const std::string& shard() const { return shard_; }
    std::map<int, PointRecord> points() const;
    // One transaction; an existing point of that id must be identical (merge).
    void write(const PointRecord& r);
    // All in one transaction, the same way: one that differs from the point
    // held under its id refuses them all, before any is written.
    void write(const std::vector<PointRecord>& records);
    bool contains(int index) const;

  private:
    SweepDatabase() = default;
    void exec(const std::string& sql) const;
    // One point's rows, inside the caller's transaction.
    void insert(const PointRecord& r, const std::vector<std::string>& parameters);

    std::string path_;
    Json spec_;
    std::string shard_;
    sqlite3* db_ = nullptr;
};

// Combines shard databases of one sweep into `out` (created, or added to when
// it holds the merged results of the same sweep); returns the points added.
// Shards that disagree on a point, or disagree with `out`, are refused before
// `out` is written, naming the shard; a failed merge leaves `out` as it was.
int mergeSweepDatabases(const std::string& out, const std::vector<std::string>& inputs);

} // namespace mw
