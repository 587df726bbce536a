#pragma once
// A mixed-integer program and its solve by COIN-OR CBC.
//
// CBC 2.10 aborts or crashes on some models (seen here: an assertion in its
// local tree search, a segfault in its dynamic branching), and it cannot be
// stopped from outside, so a program's solve runs in a helper process,
// mapwright-cbc: a crash costs the solve, not the program, and a cancelled
// search kills the helper at once. The helper is spawned (posix_spawn, a
// fresh program), never forked from this one: a forked child of a
// multi-threaded program may only call async-signal-safe functions until it
// execs, and a solve allocates (under GCC 12's AddressSanitizer the child
// deadlocked on an allocator lock another thread held at the fork).
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mw {

// A MIP assembled column by column and row by row.
class MipProblem {
  public:
    struct Row {
        std::vector<std::pair<int, double>> terms; // (column, coefficient); repeats add up
        double lo = 0.0, hi = 0.0;                 // lo <= sum coefficient x column <= hi
    };
    int col(double lo, double hi, double cost, bool integer);
    void addCost(int c, double cost) { obj_[static_cast<std::size_t>(c)] += cost; }
    void row(const std::vector<std::pair<int, double>>& terms, double lo, double hi) {
        rows_.push_back({terms, lo, hi});
    }
    int numCols() const { return static_cast<int>(lb_.size()); }
    int numRows() const { return static_cast<int>(rows_.size()); }
    int numIntegers() const;
    double lower(int c) const { return lb_[static_cast<std::size_t>(c)]; }
    double upper(int c) const { return ub_[static_cast<std::size_t>(c)]; }
    double cost(int c) const { return obj_[static_cast<std::size_t>(c)]; }
    bool integer(int c) const { return integer_[static_cast<std::size_t>(c)] != 0; }
    const std::vector<Row>& rows() const { return rows_; }

  private:
    std::vector<double> lb_, ub_, obj_;
    std::vector<char> integer_;
    std::vector<Row> rows_;
};

constexpr double kMipInfinity = 1e30; // CBC's "no bound" is anything beyond 1e20

struct MipOptions {
    double seconds = 10.0;      // CBC's time limit (elapsed time)
    int maxNodes = 0;           // branch-and-bound node limit; 0: none
    bool localBranching = true; // CBC's local tree search around incumbents
    // CBC's cut generators at the root node. CoSA's energy tangents (see
    // cosa_traffic.cpp) leave a weak LP bound that the cuts tighten: on
    // ResNet-50 layer3.0.conv3 under Eyeriss' row-stationary constraints, the
    // MIP's optimum in 2 s with them, 8 % above it after 8 s without.
    bool rootCuts = true;
    // CBC's feasibility pump, a root heuristic. On CoSA's models its first
    // schedule is a poor one that the search then seldom leaves: ResNet-50
    // under Eyeriss' row-stationary constraints, 5 s per layer, CoSA's
    // geomean 1.094x the optimum with it (layer2.0.downsample.0 2.14x),
    // 1.039x without (max 1.149x).
    bool feasibilityPump = false;
    // Candidates CBC branches on strongly at a node; -1: CBC's default (5).
    int strongBranching = -1;
    std::vector<int> startCols; // a MIP start: these columns' values, the rest 0
    std::vector<double> startValues;
};

struct MipSolution {
    bool feasible = false;
    bool optimal = false;
    bool infeasible = false; // proven
    double objective = 0.0;
    double bound = 0.0;                    // CBC's best possible objective
    std::vector<double> x;                 // the best incumbent
    std::vector<std::vector<double>> more; // other saved incumbents, best first
    double seconds = 0.0;
    double nodes = 0.0; // branch-and-bound nodes CBC explored
    int variables = 0;
    int integers = 0;
    int constraints = 0;
    std::string failure; // why there is no result: the solver process failed
};

// Solves in the mapwright-cbc helper. cancelled() is polled every 20 ms and
// kills the helper (an empty solution, no failure); a helper that outlives
// its time limit by far (1.5 x seconds + 5 s) is killed as failed.
MipSolution solveMip(const MipProblem& problem, const MipOptions& options,
                     const std::function<bool()>& cancelled);

// Solves in this process: the helper's work, and tests'.
MipSolution solveMipInProcess(const MipProblem& problem, const MipOptions& options);

// The helper's path: $MAPWRIGHT_CBC, else mapwright-cbc beside this program,
// else the build tree's; empty when none is an executable file.
std::string mipSolverPath();

// The helper's main: reads a request from `in` to its end, solves, writes the
// solution to `out`. Returns the process's exit status.
int runMipSolverHelper(int in, int out);

// The wire format between program and helper: doubles in host order.
std::vector<double> encodeMipRequest(const MipProblem& problem, const MipOptions& options);
bool decodeMipRequest(const std::vector<double>& in, MipProblem& problem, MipOptions& options);
std::vector<double> encodeMipSolution(const MipSolution& solution);
bool decodeMipSolution(const std::vector<double>& in, MipSolution& solution);

} // namespace mw
