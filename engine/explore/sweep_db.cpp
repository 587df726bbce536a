#include "explore/sweep_db.h"

#include "common/error.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace mw {

namespace {

const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS sweep(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS points(
  id INTEGER PRIMARY KEY, valid INTEGER NOT NULL, reason TEXT NOT NULL,
  energy_pJ REAL, cycles REAL, edp REAL, area_um2 REAL, evaluations INTEGER,
  seconds REAL, warm_from INTEGER, architecture TEXT);
CREATE TABLE IF NOT EXISTS point_values(
  point INTEGER NOT NULL, axis INTEGER NOT NULL, parameter TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY(point, axis));
CREATE TABLE IF NOT EXISTS layers(
  point INTEGER NOT NULL, layer INTEGER NOT NULL, name TEXT NOT NULL, same_as INTEGER,
  found INTEGER NOT NULL, energy_pJ REAL, cycles REAL, edp REAL, evaluations INTEGER,
  mapping TEXT, PRIMARY KEY(point, layer));
)";

// A prepared statement, finalized on scope exit.
class Statement {
  public:
    Statement(sqlite3* db, const std::string& sql, const std::string& where) : db_(db) {
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
            throw InputError(where, std::string("database error: ") + sqlite3_errmsg(db));
    }
    ~Statement() { sqlite3_finalize(stmt_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int i, const std::string& v) {
        sqlite3_bind_text(stmt_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    Statement& bind(int i, double v) {
        sqlite3_bind_double(stmt_, i, v);
        return *this;
    }
    Statement& bind(int i, std::int64_t v) {
        sqlite3_bind_int64(stmt_, i, v);
        return *this;
    }
    Statement& bind(int i, int v) { return bind(i, std::int64_t(v)); }
    // true while there is a row
    bool step(const std::string& where) {
        const int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW)
            return true;
        if (rc != SQLITE_DONE)
            throw InputError(where, std::string("database error: ") + sqlite3_errmsg(db_));
        return false;
    }
    std::string text(int c) const {
        const auto* t = sqlite3_column_text(stmt_, c);
        return t ? std::string(reinterpret_cast<const char*>(t),
                               std::size_t(sqlite3_column_bytes(stmt_, c)))
                 : std::string();
    }
    double real(int c) const { return sqlite3_column_double(stmt_, c); }
    bool numeric(int c) const {
        const int type = sqlite3_column_type(stmt_, c);
        return type == SQLITE_INTEGER || type == SQLITE_FLOAT;
    }
    std::int64_t integer(int c) const { return sqlite3_column_int64(stmt_, c); }

  private:
    sqlite3* db_;
    sqlite3_stmt* stmt_ = nullptr;
};

sqlite3* openFile(const std::string& path, int flags) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
        const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        throw InputError(path, "cannot be opened as a results database (" + why + ")");
    }
    sqlite3_busy_timeout(db, 10000);
    sqlite3_extended_result_codes(db, 1);
    return db;
}

// The record without its wall time, the one figure two runs differ in.
Json comparable(const PointRecord& r) {
    Json j = toJson(r);
    j.erase("seconds");
    return j;
}

} // namespace

SweepDatabase::SweepDatabase(SweepDatabase&& o) noexcept
    : path_(std::move(o.path_)), spec_(std::move(o.spec_)), shard_(std::move(o.shard_)),
      db_(o.db_) {
    o.db_ = nullptr;
}

SweepDatabase& SweepDatabase::operator=(SweepDatabase&& o) noexcept {
    if (this != &o) {
        sqlite3_close(db_);
        path_ = std::move(o.path_);
        spec_ = std::move(o.spec_);
        shard_ = std::move(o.shard_);
        db_ = o.db_;
        o.db_ = nullptr;
    }
    return *this;
}

SweepDatabase::~SweepDatabase() {
    sqlite3_close(db_);
}

void SweepDatabase::exec(const std::string& sql) const {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
        const std::string why = error ? error : sqlite3_errmsg(db_);
        sqlite3_free(error);
        throw InputError(path_, "database error: " + why);
    }
}

SweepDatabase SweepDatabase::open(const std::string& path, bool writable) {
    if (path.empty())
        throw InputError("results database", "has an empty path; expected a file's path");
    if (!std::filesystem::exists(path))
        throw InputError(path, "does not exist; expected a results database a sweep wrote");
    SweepDatabase d;
    d.path_ = path;
    d.db_ = openFile(path, writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY);
    // The cheapest statement that reads the file (and so meets a hot journal).
    const char* const probe = "SELECT 1 FROM sqlite_master LIMIT 1";
    if (!writable &&
        sqlite3_exec(d.db_, probe, nullptr, nullptr, nullptr) == SQLITE_READONLY_ROLLBACK) {
        // A sweep killed mid-write left its journal behind ("hot"), and only a
        // writer may roll it back: open for writing once, which rolls the
        // unfinished point back, then read as asked.
        sqlite3_close(d.db_);
        d.db_ = nullptr;
        sqlite3* writer = nullptr;
        const bool rolledBack =
            sqlite3_open_v2(path.c_str(), &writer, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK &&
            sqlite3_exec(writer, probe, nullptr, nullptr, nullptr) == SQLITE_OK;
        sqlite3_close(writer);
        if (!rolledBack)
            throw InputError(path, "holds an unfinished write of a killed sweep; expected write "
                                   "access to roll it back");
        d.db_ = openFile(path, SQLITE_OPEN_READONLY);
    }
    std::map<std::string, std::string> meta;
    try {
        Statement q(d.db_, "SELECT key, value FROM sweep", path);
        while (q.step(path))
            meta[q.text(0)] = q.text(1);
    } catch (const InputError&) {
        throw InputError(path, "is not a Mapwright results database (no sweep table); expected "
                               "a file `mapwright-cli sweep --db` wrote");
    }
    if (meta["format"] != "mapwright.sweep-results" || !meta.count("spec"))
        throw InputError(path, "is not a Mapwright results database; expected a file "
                               "`mapwright-cli sweep --db` wrote");
    if (std::stoi("0" + meta["version"]) > kFormatVersion)
        throw InputError(path, "was written by a newer Mapwright (version " + meta["version"] +
                                   "); expected version " + std::to_string(kFormatVersion));
    d.spec_ = parseJsonText(meta["spec"], path + ": sweep.spec");
    d.shard_ = meta["shard"];
    return d;
}

SweepDatabase SweepDatabase::create(const std::string& path, const Json& spec,
                                    const std::string& shard, bool resume) {
    if (path.empty()) // (SQLite would make a temporary database, gone at the end)
        throw InputError("results database", "has an empty path; expected a file's path");
    // An empty file holds nothing a sweep wrote (one that failed before its
    // first write leaves it): it is begun anew, not refused.
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 &&
        !ec)
        std::filesystem::remove(path, ec);
    if (std::filesystem::exists(path)) {
        SweepDatabase d = open(path, true);
        const bool holdsPoints = !d.points().empty();
        if (d.spec_ != spec)
            throw InputError(path,
                             std::string("holds the results of a different sweep; expected ") +
                                 (resume ? "the same architecture, workload, axes and search "
                                           "to resume"
                                         : "a new file for a new sweep"));
        if (d.shard_ != shard)
            throw InputError(path,
                             "holds shard '" + d.shard_ + "'; expected shard '" + shard + "'");
        if (holdsPoints && !resume)
            throw InputError(path, "already holds results of this sweep; expected --resume to "
                                   "continue it, or another --db");
        // Written to now, not after the first point: SQLite opens a file it
        // may not write read-only without a word, and a folder it may not
        // write refuses the journal only at the first write.
        if (sqlite3_db_readonly(d.db_, "main") == 1)
            throw InputError(path, "cannot be written (read-only); expected a results database "
                                   "this user may write");
        try {
            d.exec("BEGIN; UPDATE sweep SET value = value WHERE key = 'format'; COMMIT;");
        } catch (const InputError& e) {
            sqlite3_exec(d.db_, "ROLLBACK;", nullptr, nullptr, nullptr);
            throw InputError(path, "cannot be written (" + e.detail() +
                                       "); expected a results database in a folder this user "
                                       "may write");
        }
        return d;
    }
    SweepDatabase d;
    d.path_ = path;
    d.db_ = openFile(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    d.spec_ = spec;
    d.shard_ = shard;
    d.exec(std::string("BEGIN;") + kSchema);
    for (const auto& [k, v] :
         std::map<std::string, std::string>{{"format", "mapwright.sweep-results"},
                                            {"version", std::to_string(kFormatVersion)},
                                            {"spec", spec.dump()},
                                            {"shard", shard}}) {
        Statement ins(d.db_, "INSERT INTO sweep(key, value) VALUES(?, ?)", path);
        ins.bind(1, k).bind(2, v).step(path);
    }
    d.exec("COMMIT;");
    return d;
}

bool SweepDatabase::contains(int index) const {
    Statement q(db_, "SELECT 1 FROM points WHERE id = ?", path_);
    q.bind(1, index);
    return q.step(path_);
}

std::map<int, PointRecord> SweepDatabase::points() const {
    std::map<int, PointRecord> out;
    Statement q(db_,
                "SELECT id, valid, reason, energy_pJ, cycles, edp, area_um2, evaluations, "
                "seconds, warm_from, architecture FROM points ORDER BY id",
                path_);
    while (q.step(path_)) {
        PointRecord r;
        const std::int64_t id = q.integer(0);
        if (id < 0 || id > std::numeric_limits<int>::max())
            throw InputError(path_, "points.id " + std::to_string(id) +
                                        ": expected a point index from 0 to 2^31 - 1 (the "
                                        "database was altered outside mapwright)");
        r.index = int(id);
        r.valid = q.integer(1) != 0;
        r.reason = q.text(2);
        r.energy = q.real(3);
        r.cycles = q.real(4);
        r.edp = q.real(5);
        r.area = q.real(6);
        r.evaluations = q.integer(7);
        r.seconds = q.real(8);
        r.warmFrom = int(q.integer(9));
        // A valid point's figures are numbers from 0 (text read as 0 J, or a
        // negative energy, was drawn and put on the Pareto front).
        if (r.valid)
            for (int c : {3, 4, 5})
                if (!q.numeric(c) || !(q.real(c) >= 0.0) || !std::isfinite(q.real(c)))
                    throw InputError(path_, "point " + std::to_string(id) + "'s " +
                                                (c == 3   ? "energy_pJ"
                                                 : c == 4 ? "cycles"
                                                          : "edp") +
                                                " is not a number from 0 (the database was "
                                                "altered outside mapwright)");
        const std::string arch = q.text(10);
        if (!arch.empty())
            r.architecture = parseJsonText(arch, path_ + ": points.architecture");
        out[r.index] = std::move(r);
    }
    Statement v(db_, "SELECT point, value FROM point_values ORDER BY point, axis", path_);
    while (v.step(path_))
        if (auto it = out.find(int(v.integer(0))); it != out.end())
            it->second.values.push_back(v.text(1));
    // Every reader takes a point's values one per varied parameter.
    const std::size_t axes = spec_.contains("vary") ? spec_.at("vary").size() : 0;
    for (const auto& [index, r] : out)
        if (r.values.size() != axes)
            throw InputError(path_, "point " + std::to_string(index) + " has " +
                                        std::to_string(r.values.size()) +
                                        " values of its design; expected one per varied "
                                        "parameter (" +
                                        std::to_string(axes) +
                                        ": the database was altered outside mapwright)");
    Statement l(db_,
                "SELECT point, name, same_as, found, energy_pJ, cycles, edp, evaluations, mapping "
                "FROM layers ORDER BY point, layer",
                path_);
    while (l.step(path_)) {
        auto it = out.find(int(l.integer(0)));
        if (it == out.end())
            continue;
        LayerRecord r;
        r.name = l.text(1);
        r.sameAs = int(l.integer(2));
        r.found = l.integer(3) != 0;
        r.energy = l.real(4);
        r.cycles = l.real(5);
        r.edp = l.real(6);
        r.evaluations = l.integer(7);
        const std::string m = l.text(8);
        if (!m.empty())
            r.mapping = parseJsonText(m, path_ + ": layers.mapping");
        it->second.layers.push_back(std::move(r));
    }
    return out;
}

void SweepDatabase::write(const PointRecord& r) {
    write(std::vector<PointRecord>{r});
}

void SweepDatabase::write(const std::vector<PointRecord>& records) {
    // Points held already must be identical: checked before anything is
    // written, against one read of what the file holds.
    std::map<int, PointRecord> held;
    if (std::any_of(records.begin(), records.end(),
                    [&](const PointRecord& r) { return contains(r.index); }))
        held = points();
    for (const PointRecord& r : records) {
        const auto it = held.find(r.index);
        if (it != held.end() && comparable(it->second) != comparable(r))
            throw InputError(path_, "already holds point " + std::to_string(r.index) +
                                        " with other results; expected the same sweep's");
    }
    std::vector<std::string> parameters;
    for (const auto& axis : spec_.at("vary"))
        parameters.push_back(axis.at("parameter").get<std::string>());
    exec("BEGIN IMMEDIATE;");
    try {
        for (const PointRecord& r : records)
            if (!held.count(r.index))
                insert(r, parameters);
        exec("COMMIT;");
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
        throw;
    }
}

void SweepDatabase::insert(const PointRecord& r, const std::vector<std::string>& parameters) {
    Statement p(db_,
                "INSERT INTO points(id, valid, reason, energy_pJ, cycles, edp, area_um2, "
                "evaluations, seconds, warm_from, architecture) "
                "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                path_);
    p.bind(1, r.index)
        .bind(2, int(r.valid))
        .bind(3, r.reason)
        .bind(4, r.energy)
        .bind(5, r.cycles)
        .bind(6, r.edp)
        .bind(7, r.area)
        .bind(8, r.evaluations)
        .bind(9, r.seconds)
        .bind(10, r.warmFrom)
        .bind(11, r.architecture.is_null() ? std::string() : r.architecture.dump());
    p.step(path_);
    for (std::size_t a = 0; a < r.values.size(); ++a) {
        Statement v(db_,
                    "INSERT INTO point_values(point, axis, parameter, value) "
                    "VALUES(?, ?, ?, ?)",
                    path_);
        v.bind(1, r.index)
            .bind(2, int(a))
            .bind(3, a < parameters.size() ? parameters[a] : std::string())
            .bind(4, r.values[a]);
        v.step(path_);
    }
    for (std::size_t i = 0; i < r.layers.size(); ++i) {
        const LayerRecord& l = r.layers[i];
        Statement s(db_,
                    "INSERT INTO layers(point, layer, name, same_as, found, energy_pJ, "
                    "cycles, edp, evaluations, mapping) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    path_);
        s.bind(1, r.index)
            .bind(2, int(i))
            .bind(3, l.name)
            .bind(4, l.sameAs)
            .bind(5, int(l.found))
            .bind(6, l.energy)
            .bind(7, l.cycles)
            .bind(8, l.edp)
            .bind(9, l.evaluations)
            .bind(10, l.mapping.is_null() ? std::string() : l.mapping.dump());
        s.step(path_);
    }
}

int mergeSweepDatabases(const std::string& out, const std::vector<std::string>& inputs) {
    if (inputs.empty())
        throw InputError("sweep merge", "expected OUT.sqlite IN.sqlite...");
    if (out.empty())
        throw InputError("sweep merge", "OUT has an empty path; expected a file's path");
    const bool outExists = std::filesystem::exists(out);
    // Everything is checked before OUT is touched, and written in one
    // transaction: a merge that fails leaves OUT as it was.
    std::map<int, std::pair<PointRecord, std::string>> merged; // point -> record, its shard
    Json spec;
    for (const auto& path : inputs) {
        std::error_code ec;
        if (outExists && std::filesystem::equivalent(out, path, ec))
            throw InputError(path, "is OUT itself; expected a shard to merge into " + out);
        const SweepDatabase in = SweepDatabase::open(path);
        if (spec.is_null())
            spec = in.spec();
        else if (in.spec() != spec)
            throw InputError(path, "holds a different sweep than " + inputs.front() +
                                       "; expected shards of one sweep");
        for (auto& [index, record] : in.points()) {
            const auto [it, isNew] = merged.try_emplace(index, record, path);
            if (!isNew && comparable(it->second.first) != comparable(record))
                throw InputError(path, "holds point " + std::to_string(index) +
                                           " with other results than " + it->second.second +
                                           "; expected shards of one run of the sweep");
        }
    }
    if (outExists) {
        const SweepDatabase held = SweepDatabase::open(out);
        if (!held.shard().empty())
            throw InputError(out, "is shard '" + held.shard() +
                                      "' of a sweep; expected a merged database or a new file "
                                      "to merge into");
        if (held.spec() != spec)
            throw InputError(out, "holds the results of a different sweep than " + inputs.front() +
                                      "; expected shards of its sweep, or a new file");
        for (const auto& [index, record] : held.points()) {
            const auto it = merged.find(index);
            if (it != merged.end() && comparable(it->second.first) != comparable(record))
                throw InputError(it->second.second,
                                 "holds point " + std::to_string(index) +
                                     " with other results than " + out +
                                     " holds; expected shards of one run of the sweep");
        }
    }
    SweepDatabase target = SweepDatabase::create(out, spec, "", true);
    std::vector<PointRecord> records;
    for (auto& [index, entry] : merged)
        if (!target.contains(index))
            records.push_back(std::move(entry.first));
    target.write(records);
    return int(records.size());
}

} // namespace mw
