#pragma once
// sweep: design-space sweeps on local threads, under mpirun (cli_sweep_mpi.cpp,
// when built with MPI) or as one shard of a job array; sweep report, sweep merge.
#include "cli_common.h"
#include "explore/pareto.h"
#include "explore/sweep_db.h"

#include <set>
#include <string>
#include <vector>

namespace cli {

struct SweepRun {
    mw::SweepSpec spec;
    std::string db;        // --db
    mw::SweepShard shard;  // --shard I/N
    std::string shardText; // as given, stored in the database ("" when whole)
    bool resume = false;
    int threads = 1; // points at once, per process
    // Under mpirun, rank 0's own points at once (--coordinator-threads); -1:
    // `threads`. At 0 it only hands out points and writes the database.
    int coordinatorThreads = -1;
};

// "1 thread", "2 threads": the run headers' figure.
inline std::string threadCount(int n) {
    return std::to_string(n) + (n == 1 ? " thread" : " threads");
}

// One line per finished point, as the sweep goes; a param it did not read is
// noted once (`noted`: those said already).
void printPoint(const mw::SweepSpec& spec, const mw::PointRecord& r, int done, int total,
                std::set<std::string>& noted);
// The end of a run: counts, time, the energy-cycles front; the exit status.
int finishSweep(const SweepRun& run, const mw::SweepDatabase& db, double seconds, bool complete);

// Under mpirun (a launcher's environment), when this build has MPI.
bool launchedByMpi();
int runSweepMpi(const SweepRun& run);

// The scatter of a report (ui/sweep_plot.h), when this build has Qt.
bool sweepPlotAvailable();
void writeSweepPlot(const std::string& path, const mw::SweepSpec& spec,
                    const std::vector<mw::PointRecord>& points,
                    const std::vector<mw::SweepMetric>& metrics);

} // namespace cli
