#include "explore/sweep_run.h"

#include "common/error.h"
#include "common/json_fields.h"
#include "estimate/estimator.h"
#include "search/network_search.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <system_error>
#include <thread>

namespace mw {

using namespace json_fields;

Json toJson(const PointRecord& r) {
    Json layers = Json::array();
    for (const auto& l : r.layers)
        layers.push_back({{"name", l.name},
                          {"same_as", l.sameAs},
                          {"found", l.found},
                          {"energy_pJ", l.energy},
                          {"cycles", l.cycles},
                          {"edp", l.edp},
                          {"evaluations", l.evaluations},
                          {"mapping", l.mapping}});
    return {{"index", r.index},
            {"values", r.values},
            {"valid", r.valid},
            {"reason", r.reason},
            {"architecture", r.architecture},
            {"energy_pJ", r.energy},
            {"cycles", r.cycles},
            {"edp", r.edp},
            {"area_um2", r.area},
            {"evaluations", r.evaluations},
            {"seconds", r.seconds},
            {"warm_from", r.warmFrom},
            {"layers", layers}};
}

PointRecord pointRecordFromJson(const Json& j, const std::string& where) {
    PointRecord r;
    r.index = required<int>(j, "index", where);
    for (const auto& v : arrayMember(j, "values", where))
        r.values.push_back(as<std::string>(v, where + ".values"));
    r.valid = required<bool>(j, "valid", where);
    r.reason = optional<std::string>(j, "reason", where, "");
    r.architecture = j.contains("architecture") ? j.at("architecture") : Json();
    r.energy = optional<double>(j, "energy_pJ", where, 0.0);
    r.cycles = optional<double>(j, "cycles", where, 0.0);
    r.edp = optional<double>(j, "edp", where, 0.0);
    r.area = optional<double>(j, "area_um2", where, 0.0);
    r.evaluations = optional<std::int64_t>(j, "evaluations", where, 0);
    r.seconds = optional<double>(j, "seconds", where, 0.0);
    r.warmFrom = optional<int>(j, "warm_from", where, -1);
    const Json& layers = arrayMember(j, "layers", where);
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string at = where + ".layers[" + std::to_string(i) + "]";
        LayerRecord l;
        l.name = required<std::string>(layers[i], "name", at);
        l.sameAs = optional<int>(layers[i], "same_as", at, -1);
        l.found = optional<bool>(layers[i], "found", at, false);
        l.energy = optional<double>(layers[i], "energy_pJ", at, 0.0);
        l.cycles = optional<double>(layers[i], "cycles", at, 0.0);
        l.edp = optional<double>(layers[i], "edp", at, 0.0);
        l.evaluations = optional<std::int64_t>(layers[i], "evaluations", at, 0);
        l.mapping = layers[i].contains("mapping") ? layers[i].at("mapping") : Json();
        r.layers.push_back(std::move(l));
    }
    return r;
}

namespace {

// How every point searches its layers on `arch` (which, like s, must outlive
// the options: the constraints refer to both).
NetworkSearchOptions pointSearchOptions(const SweepSpec& s, const Architecture& arch) {
    NetworkSearchOptions o;
    o.searcher = s.searcher;
    o.settings.budget.evaluations = s.budget;
    o.settings.seed = s.seed;
    o.settings.objective = SearchObjective::parse(s.objective);
    o.settings.params = s.params;
    o.settings.threads = 1;
    o.settings.progressInterval = 1e9; // nobody watches a point's layers
    if (!s.constraints.is_null())
        o.constraints = [&s, &arch](const Problem& problem) {
            return constraintsFromJson(s.constraints, problem, arch);
        };
    return o;
}

} // namespace

std::optional<PointRecord> evaluateDesignPoint(const SweepSpec& s, const DesignPoint& p,
                                               const PointRecord* predecessor,
                                               const std::atomic<bool>* cancel) {
    const auto t0 = std::chrono::steady_clock::now();
    PointRecord r;
    r.index = p.index;
    r.values = p.values;
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    Architecture arch;
    try {
        arch = pointArchitecture(s, p);
    } catch (const InputError& e) {
        r.reason = std::string("not a design: ") + e.what();
        r.seconds = elapsed();
        return r;
    }
    r.architecture = toJson(arch);
    r.area = estimateArchitecture(arch).onChipArea;

    NetworkSearchOptions o = pointSearchOptions(s, arch);
    o.warmStart = true;
    // The neighbouring point's mappings, each repaired by the searcher where
    // this design cannot hold it.
    if (predecessor && predecessor->valid) {
        o.layerSeeds.resize(s.network.layers.size());
        for (std::size_t i = 0; i < s.network.layers.size() && i < predecessor->layers.size();
             ++i) {
            const Json& m = predecessor->layers[i].mapping;
            if (m.is_null())
                continue;
            try {
                o.layerSeeds[i] = mappingFromJson(m, buildProblem(s.network.layers[i]), arch);
            } catch (const InputError&) {
                // A mapping this design cannot express: the layer starts afresh.
            }
        }
        r.warmFrom = predecessor->index;
    }
    NetworkOutcome out;
    try {
        out = searchNetwork(s.network, arch, o, {}, cancel);
    } catch (const InputError& e) {
        r.reason = e.what();
        r.seconds = elapsed();
        return r;
    }
    if (out.cancelled || (cancel && cancel->load()))
        return std::nullopt;
    r.valid = true;
    for (std::size_t i = 0; i < out.layers.size(); ++i) {
        const LayerOutcome& lo = out.layers[i];
        LayerRecord l;
        l.name = lo.name;
        l.sameAs = lo.sameAs;
        l.found = lo.result.found;
        if (lo.result.found) {
            l.energy = lo.result.bestEvaluation.energy;
            l.cycles = double(lo.result.bestEvaluation.cycles);
            l.edp = lo.result.bestEvaluation.edp;
            if (lo.sameAs < 0)
                l.mapping = toJson(lo.result.best, buildProblem(s.network.layers[i]), arch);
        } else if (r.valid) {
            r.valid = false;
            r.reason =
                "layer " + lo.name + ": no legal mapping found (" + lo.result.stopReason + ")";
        }
        l.evaluations = lo.sameAs < 0 ? lo.result.evaluations : 0;
        r.layers.push_back(std::move(l));
    }
    for (const auto& param : s.params) {
        const std::string& name = param.first; // (a lambda may not capture a binding)
        const bool read = std::any_of(out.layers.begin(), out.layers.end(), [&](const auto& lo) {
            const auto& unread = lo.result.unreadParams;
            return lo.sameAs < 0 && std::find(unread.begin(), unread.end(), name) == unread.end();
        });
        if (!read)
            r.unreadParams.push_back(name);
    }
    r.energy = out.energy;
    r.cycles = out.cycles;
    r.edp = out.edp;
    r.evaluations = out.evaluations;
    r.seconds = elapsed();
    return r;
}

void checkSweepParams(const SweepSpec& s,
                      const std::function<std::string(const std::string&)>& whereOfParam) {
    if (s.params.empty() || s.network.layers.empty())
        return;
    for (const DesignPoint& p : planSweep(s)) {
        Architecture arch;
        try {
            arch = pointArchitecture(s, p);
        } catch (const InputError&) {
            continue; // not a design: its record will say so
        }
        Network first = s.network;
        first.layers.resize(1);
        NetworkSearchOptions o = pointSearchOptions(s, arch);
        o.settings.budget.evaluations = 1;
        o.settings.budget.seconds = 1.0; // CoSA's MIP, say, is not one evaluation
        try {
            searchNetwork(first, arch, o, {}, nullptr);
        } catch (const ParamError& e) {
            throw InputError(whereOfParam(e.name()), e.detail());
        } catch (const InputError&) {
            // The layer's own trouble: each point's record will say it.
        }
        return;
    }
}

SweepSchedule::SweepSchedule(std::vector<DesignPoint> points, const std::set<int>& done)
    : points_(std::move(points)), done_(done) {
    for (std::size_t i = 0; i < points_.size(); ++i)
        byIndex_[points_[i].index] = i;
    remaining_ = static_cast<int>(points_.size());
}

std::optional<DesignPoint> SweepSchedule::next() {
    for (const DesignPoint& p : points_) {
        if (done_.count(p.index) || running_.count(p.index))
            continue;
        // A predecessor outside the schedule was finished before it began.
        const bool ready =
            p.predecessor < 0 || done_.count(p.predecessor) || !byIndex_.count(p.predecessor);
        if (ready) {
            running_.insert(p.index);
            return p;
        }
    }
    return std::nullopt;
}

void SweepSchedule::finished(int index) {
    running_.erase(index);
    if (byIndex_.count(index) && done_.insert(index).second)
        --remaining_;
}

void SweepSchedule::abandoned(int index) {
    running_.erase(index);
}

std::vector<DesignPoint> pendingPoints(const SweepSpec& s, const SweepShard& shard,
                                       const std::map<int, PointRecord>& finished) {
    std::vector<DesignPoint> pending;
    for (const DesignPoint& p : planSweep(s))
        if (shard.contains(p) && !finished.count(p.index))
            pending.push_back(p);
    return pending;
}

bool runSweep(const SweepSpec& s, const std::map<int, PointRecord>& finished,
              const SweepRunOptions& options,
              const std::function<void(const PointRecord&)>& onPoint,
              const std::atomic<bool>* cancel) {
    std::set<int> done;
    for (const auto& [index, record] : finished)
        done.insert(index);
    SweepSchedule schedule(pendingPoints(s, options.shard, finished), done);
    std::map<int, PointRecord> records = finished; // the predecessors' mappings

    std::mutex mutex;
    std::condition_variable changed;
    std::deque<PointRecord> results;
    bool stop = false;
    // What the workers' searches watch: the caller's cancel, or this
    // function giving up (onPoint threw: the database cannot be written).
    std::atomic<bool> halt{false};
    const int threads = std::max(1, options.threads);
    auto worker = [&] {
        std::unique_lock lock(mutex);
        for (;;) {
            if (stop || halt.load() || schedule.complete())
                return;
            std::optional<DesignPoint> p = schedule.next();
            if (!p) { // the points left wait for their predecessors
                changed.wait(lock);
                continue;
            }
            const auto pred = p->predecessor >= 0 ? records.find(p->predecessor) : records.end();
            const PointRecord* predecessor = pred == records.end() ? nullptr : &pred->second;
            lock.unlock();
            std::optional<PointRecord> r = evaluateDesignPoint(s, *p, predecessor, &halt);
            lock.lock();
            if (!r) { // cancelled
                schedule.abandoned(p->index);
                changed.notify_all();
                return;
            }
            // The record as it will be read back, so a resumed sweep's warm
            // starts are the same as this run's.
            records[p->index] = pointRecordFromJson(toJson(*r), "point");
            results.push_back(std::move(*r));
            schedule.finished(p->index);
            changed.notify_all();
        }
    };
    // `records` is only read by workers for finished points, which never
    // change again; writes happen under the lock.
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        try {
            pool.emplace_back(worker);
        } catch (const std::system_error& e) {
            if (pool.empty())
                throw InputError("threads",
                                 std::string("cannot start a thread (") + e.what() + ")");
            break; // the system's limit: the threads started take the points
        }
    }
    auto stopWorkers = [&] {
        {
            std::lock_guard lock(mutex);
            stop = true;
        }
        changed.notify_all();
        for (auto& t : pool)
            t.join();
    };
    try {
        std::unique_lock lock(mutex);
        for (;;) {
            while (!results.empty()) {
                PointRecord r = std::move(results.front());
                results.pop_front();
                lock.unlock();
                onPoint(r);
                lock.lock();
            }
            if (cancel && cancel->load())
                halt = true; // (seen by the searches within 50 ms)
            if (schedule.complete() || halt.load())
                break;
            changed.wait_for(lock, std::chrono::milliseconds(50));
        }
    } catch (...) {
        // The points in flight are dropped; threads left running would
        // end the process (std::terminate) as the pool went out of scope.
        halt = true;
        stopWorkers();
        throw;
    }
    stopWorkers();
    // Points that finished while the others stopped still count.
    for (auto& r : results)
        onPoint(r);
    return schedule.complete();
}

} // namespace mw
