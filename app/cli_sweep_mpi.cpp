// sweep under mpirun: rank 0 owns the database and the schedule and hands
// points out as ranks (and its own threads) become free; every rank
// evaluates points on its threads. A point's result depends only on the
// sweep, the point and its predecessor's record (sent with it), so the
// database equals a single-process run's. Only the main thread of each rank
// calls MPI (MPI_THREAD_FUNNELED).
#include "cli_interrupt.h"
#include "cli_sweep.h"

#include <cstdlib>

#ifdef MAPWRIGHT_MPI
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <system_error>
#include <thread>
#endif

namespace cli {

bool launchedByMpi() {
    // Open MPI, MPICH/Hydra and PMIx launchers set these in every rank.
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
        if (std::getenv(v))
            return true;
    return false;
}

#ifndef MAPWRIGHT_MPI

int runSweepMpi(const SweepRun&) {
    throw InputError("sweep", "was started by mpirun, but this build has no MPI (install "
                              "libopenmpi-dev and rebuild); run it without mpirun to use this "
                              "machine's threads, or --shard I/N for a job array");
}

#else

namespace {

enum Tag : int { kWork = 1, kResult = 2, kStop = 3, kReady = 4 };

void send(const std::string& text, int rank, int tag) {
    MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, rank, tag, MPI_COMM_WORLD);
}

// A message waiting from anyone with any tag, or false.
bool receive(std::string& text, int& rank, int& tag) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (!flag)
        return false;
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    text.assign(std::size_t(count), '\0');
    MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    rank = status.MPI_SOURCE;
    tag = status.MPI_TAG;
    return true;
}

// Points evaluated on this rank's threads; results collected by the main thread.
class LocalPool {
  public:
    LocalPool(const mw::SweepSpec& spec, int threads, const std::atomic<bool>* cancel)
        : spec_(spec), cancel_(cancel) {
        for (int t = 0; t < threads; ++t) {
            try {
                threads_.emplace_back([this] { work(); });
            } catch (const std::system_error& e) {
                if (threads_.empty())
                    throw mw::InputError("--threads",
                                         std::string("cannot start a thread (") + e.what() + ")");
                break; // the system's limit: the threads started take the points
            }
        }
    }
    ~LocalPool() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        for (auto& t : threads_)
            t.join();
    }
    int size() const { return static_cast<int>(threads_.size()); }
    void add(const mw::DesignPoint& p, std::optional<mw::PointRecord> predecessor) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back({p, std::move(predecessor)});
        }
        changed_.notify_one();
    }
    bool take(mw::PointRecord& r) {
        std::lock_guard lock(mutex_);
        if (done_.empty())
            return false;
        r = std::move(done_.front());
        done_.pop_front();
        return true;
    }

  private:
    struct Job {
        mw::DesignPoint point;
        std::optional<mw::PointRecord> predecessor;
    };
    void work() {
        std::unique_lock lock(mutex_);
        for (;;) {
            changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
            if (stop_)
                return;
            Job job = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            auto r = mw::evaluateDesignPoint(
                spec_, job.point, job.predecessor ? &*job.predecessor : nullptr, cancel_);
            lock.lock();
            if (r)
                done_.push_back(std::move(*r));
        }
    }
    const mw::SweepSpec& spec_;
    const std::atomic<bool>* cancel_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Job> queue_;
    std::deque<mw::PointRecord> done_;
    bool stop_ = false;
    std::vector<std::thread> threads_;
};

mw::Json workMessage(const mw::DesignPoint& p, const mw::PointRecord* predecessor) {
    return {{"index", p.index},
            {"values", p.values},
            {"predecessor", p.predecessor},
            {"chain", p.chain},
            {"predecessor_record", predecessor ? mw::toJson(*predecessor) : mw::Json()}};
}

void idle() {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

int coordinate(const SweepRun& run, int ranks) {
    const int ownThreads = run.coordinatorThreads >= 0 ? run.coordinatorThreads : run.threads;
    if (ownThreads == 0 && ranks == 1)
        throw mw::InputError("--coordinator-threads",
                             "is 0 and mpirun started one rank, so no rank would run the points; "
                             "start more ranks or give rank 0 threads");
    const auto t0 = std::chrono::steady_clock::now();
    mw::SweepDatabase db =
        mw::SweepDatabase::create(run.db, mw::toJson(run.spec), run.shardText, run.resume);
    std::map<int, mw::PointRecord> records = db.points();
    std::set<int> done;
    for (const auto& [index, r] : records)
        done.insert(index);
    mw::SweepSchedule schedule(mw::pendingPoints(run.spec, run.shard, records), done);
    const int total = static_cast<int>(mw::pendingPoints(run.spec, run.shard, {}).size());
    int finished = static_cast<int>(records.size());
    std::cout << "sweep        " << total << " points (" << finished << " done before) on " << ranks
              << " MPI ranks, " << threadCount(run.threads) << " each"
              << (ownThreads == run.threads ? "" : " (rank 0: " + std::to_string(ownThreads) + ")")
              << ", into " << run.db << "\n";

    LocalPool local(run.spec, ownThreads, interruptFlag());
    int localFree = local.size();
    std::map<int, int> remoteFree; // rank -> free slots (after it says it is ready)
    std::map<int, int> owner;      // point -> rank running it (0: here)
    auto predecessorOf = [&](const mw::DesignPoint& p) -> const mw::PointRecord* {
        const auto it = p.predecessor >= 0 ? records.find(p.predecessor) : records.end();
        return it == records.end() ? nullptr : &it->second;
    };
    std::set<std::string> noted; // unread params (this rank's points say), said once
    auto record = [&](mw::PointRecord r) {
        db.write(r);
        printPoint(run.spec, r, ++finished, total, noted);
        schedule.finished(r.index);
        owner.erase(r.index);
        // As read back from the database, so warm starts match a resumed run's.
        records[r.index] = mw::pointRecordFromJson(mw::toJson(r), "point");
    };
    while (!schedule.complete() && !interrupted()) {
        bool busy = false;
        // Hand out ready points to free slots: this rank's threads first.
        for (;;) {
            int rank = -1;
            if (localFree > 0)
                rank = 0;
            else
                for (auto& [r, free] : remoteFree)
                    if (free > 0) {
                        rank = r;
                        break;
                    }
            if (rank < 0)
                break;
            std::optional<mw::DesignPoint> p = schedule.next();
            if (!p)
                break;
            owner[p->index] = rank;
            const mw::PointRecord* pred = predecessorOf(*p);
            if (rank == 0) {
                --localFree;
                local.add(*p, pred ? std::optional<mw::PointRecord>(*pred) : std::nullopt);
            } else {
                --remoteFree[rank];
                send(workMessage(*p, pred).dump(), rank, kWork);
            }
            busy = true;
        }
        mw::PointRecord r;
        while (local.take(r)) {
            ++localFree;
            record(std::move(r));
            busy = true;
        }
        std::string text;
        int rank = 0, tag = 0;
        while (receive(text, rank, tag)) {
            busy = true;
            if (tag == kReady)
                remoteFree[rank] = std::stoi(text);
            else if (tag == kResult) {
                ++remoteFree[rank];
                const mw::Json result = mw::parseJsonText(text, "MPI result");
                mw::PointRecord remote = mw::pointRecordFromJson(result.at("record"), "point");
                // (Not part of a record as stored: sent beside it for the note.)
                remote.unreadParams = result.at("unread_params").get<std::vector<std::string>>();
                record(std::move(remote));
            }
        }
        if (!busy)
            idle();
    }
    for (int r = 1; r < ranks; ++r)
        send("", r, kStop);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return finishSweep(run, db, seconds, schedule.complete());
}

int serve(const SweepRun& run) {
    LocalPool local(run.spec, run.threads, interruptFlag());
    send(std::to_string(local.size()), 0, kReady);
    for (;;) {
        bool busy = false;
        std::string text;
        int rank = 0, tag = 0;
        while (receive(text, rank, tag)) {
            busy = true;
            if (tag == kStop)
                return 0; // points in flight are dropped with the pool
            const mw::Json w = mw::parseJsonText(text, "MPI work");
            mw::DesignPoint p;
            p.index = w.at("index").get<int>();
            p.values = w.at("values").get<std::vector<std::string>>();
            p.predecessor = w.at("predecessor").get<int>();
            p.chain = w.at("chain").get<int>();
            std::optional<mw::PointRecord> pred;
            if (!w.at("predecessor_record").is_null())
                pred = mw::pointRecordFromJson(w.at("predecessor_record"), "predecessor");
            local.add(p, std::move(pred));
        }
        mw::PointRecord r;
        while (local.take(r)) {
            send(mw::Json{{"record", mw::toJson(r)}, {"unread_params", r.unreadParams}}.dump(), 0,
                 kResult);
            busy = true;
        }
        if (!busy)
            idle();
    }
}

} // namespace

int runSweepMpi(const SweepRun& run) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int status = 0;
    try {
        status = rank == 0 ? coordinate(run, ranks) : serve(run);
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        // Other ranks wait on this one and must be stopped; a rank alone
        // ends as any process does, without mpirun's abort banner.
        if (ranks > 1)
            MPI_Abort(MPI_COMM_WORLD, 2);
        status = 2;
    }
    MPI_Finalize();
    return status;
}

#endif

} // namespace cli
