#include "search/mip_solver.h"

#include "common/helper_process.h"

#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mw {

int MipProblem::col(double lo, double hi, double cost, bool integer) {
    lb_.push_back(lo);
    ub_.push_back(hi);
    obj_.push_back(cost);
    integer_.push_back(integer ? 1 : 0);
    return numCols() - 1;
}

int MipProblem::numIntegers() const {
    return static_cast<int>(std::count(integer_.begin(), integer_.end(), 1));
}

namespace {

MipSolution sizesOf(const MipProblem& problem) {
    MipSolution s;
    s.variables = problem.numCols();
    s.constraints = problem.numRows();
    s.integers = problem.numIntegers();
    return s;
}

// CBC takes the matrix by columns, each (row, column) entry once.
void load(const MipProblem& problem, Cbc_Model* model) {
    const int n = problem.numCols();
    std::vector<std::vector<std::pair<int, double>>> byCol(static_cast<std::size_t>(n));
    std::vector<double> rlo, rhi;
    const auto& rows = problem.rows();
    for (std::size_t r = 0; r < rows.size(); ++r) {
        for (const auto& [c, v] : rows[r].terms)
            if (v != 0.0)
                byCol[static_cast<std::size_t>(c)].push_back({static_cast<int>(r), v});
        rlo.push_back(rows[r].lo);
        rhi.push_back(rows[r].hi);
    }
    std::vector<CoinBigIndex> start{0};
    std::vector<int> index;
    std::vector<double> value;
    for (auto& e : byCol) {
        std::sort(e.begin(), e.end());
        for (std::size_t i = 0; i < e.size(); ++i) {
            if (i > 0 && e[i].first == e[i - 1].first) {
                value.back() += e[i].second;
                continue;
            }
            index.push_back(e[i].first);
            value.push_back(e[i].second);
        }
        start.push_back(static_cast<CoinBigIndex>(index.size()));
    }
    std::vector<double> lb(static_cast<std::size_t>(n)), ub(lb), obj(lb);
    for (int c = 0; c < n; ++c) {
        lb[static_cast<std::size_t>(c)] = problem.lower(c);
        ub[static_cast<std::size_t>(c)] = problem.upper(c);
        obj[static_cast<std::size_t>(c)] = problem.cost(c);
    }
    Cbc_loadProblem(model, n, problem.numRows(), start.data(), index.data(), value.data(),
                    lb.data(), ub.data(), obj.data(), rlo.data(), rhi.data());
    for (int c = 0; c < n; ++c)
        if (problem.integer(c))
            Cbc_setInteger(model, c);
}

constexpr double kRequestTag = 0x4D574342; // "MWCB"
constexpr double kWireVersion = 2;
constexpr std::size_t kSolutionHeader = 9;
constexpr double kMaxCount = 1e8; // a decoded count beyond this is a corrupt request

bool count(double v, std::size_t& out) {
    if (!(v >= 0 && v <= kMaxCount) || v != std::floor(v))
        return false;
    out = static_cast<std::size_t>(v);
    return true;
}

// The doubles a byte stream carries; false if it ends mid-double.
bool doublesFrom(const std::vector<char>& bytes, std::vector<double>& out) {
    out.resize(bytes.size() / sizeof(double));
    if (!out.empty())
        std::memcpy(out.data(), bytes.data(), out.size() * sizeof(double));
    return bytes.size() % sizeof(double) == 0;
}

} // namespace

MipSolution solveMipInProcess(const MipProblem& problem, const MipOptions& options) {
    MipSolution s = sizesOf(problem);
    Cbc_Model* model = Cbc_newModel();
    load(problem, model);
    Cbc_setObjSense(model, 1.0);
    Cbc_setLogLevel(model, 0);
    Cbc_setParameter(model, "threads", "0"); // no worker threads: deterministic search
    Cbc_setParameter(model, "timeMode", "elapsed");
    // Preprocessing does not pay on CoSA's models; cuts at the root do (see
    // MipOptions::rootCuts).
    Cbc_setParameter(model, "preprocess", "off");
    Cbc_setParameter(model, "cuts", options.rootCuts ? "root" : "off");
    // Ten rounds of cuts get most of their bound (CBC's default, 100 on a
    // small model, took 2 s of a 2.5 s solve on ResNet-50 layer4.1.conv1).
    Cbc_setParameter(model, "passCuts", "10");
    Cbc_setParameter(model, "localTreeSearch", options.localBranching ? "on" : "off");
    if (options.strongBranching >= 0)
        Cbc_setParameter(model, "strongBranching", std::to_string(options.strongBranching).c_str());
    Cbc_setParameter(model, "feasibilityPump", options.feasibilityPump ? "on" : "off");
    Cbc_setMaximumSeconds(model, std::max(0.05, options.seconds));
    if (options.maxNodes > 0)
        Cbc_setMaximumNodes(model, options.maxNodes);
    if (!options.startCols.empty())
        Cbc_setMIPStartI(model, static_cast<int>(options.startCols.size()),
                         options.startCols.data(), options.startValues.data());
    const auto t0 = std::chrono::steady_clock::now();
    Cbc_solve(model);
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.nodes = Cbc_getNodeCount(model);
    const double* best = Cbc_bestSolution(model);
    s.infeasible = Cbc_isProvenInfeasible(model) != 0;
    if (best && !s.infeasible) {
        s.feasible = true;
        s.optimal = Cbc_isProvenOptimal(model) != 0;
        s.objective = Cbc_getObjValue(model);
        s.bound = Cbc_getBestPossibleObjValue(model);
        s.x.assign(best, best + problem.numCols());
        const int saved = Cbc_numberSavedSolutions(model);
        for (int i = 0; i < saved; ++i)
            if (const double* sol = Cbc_savedSolution(model, i))
                s.more.emplace_back(sol, sol + problem.numCols());
    }
    Cbc_deleteModel(model);
    return s;
}

std::string mipSolverPath() {
#ifdef MAPWRIGHT_CBC_BUILD_PATH
    return findHelper("MAPWRIGHT_CBC", "mapwright-cbc", MAPWRIGHT_CBC_BUILD_PATH);
#else
    return findHelper("MAPWRIGHT_CBC", "mapwright-cbc", nullptr);
#endif
}

MipSolution solveMip(const MipProblem& problem, const MipOptions& options,
                     const std::function<bool()>& cancelled) {
    MipSolution s = sizesOf(problem);
    const std::string helper = mipSolverPath();
    if (helper.empty()) {
        s.failure = "the CBC helper mapwright-cbc was not found beside the program (set "
                    "MAPWRIGHT_CBC to its path)";
        return s;
    }
    const double patience = 1.5 * options.seconds + 5.0; // past CBC's own time limit
    const std::vector<double> request = encodeMipRequest(problem, options);
    const HelperRun run = runHelper(helper, reinterpret_cast<const char*>(request.data()),
                                    request.size() * sizeof(double), patience, cancelled);
    switch (run.outcome) {
    case HelperRun::Outcome::Cancelled:
        return s; // no schedule, and no failure: the caller asked for it
    case HelperRun::Outcome::Overran:
        s.failure = "the CBC process ran " + std::to_string(int(patience)) +
                    " s past its start without finishing and was stopped";
        return s;
    case HelperRun::Outcome::Failed:
        s.failure = "CBC " + run.failure;
        return s;
    case HelperRun::Outcome::Replied:
        break;
    }
    std::vector<double> in;
    MipSolution solved = sizesOf(problem);
    if (!doublesFrom(run.reply, in) || !decodeMipSolution(in, solved) ||
        (!solved.x.empty() && solved.x.size() != std::size_t(problem.numCols()))) {
        s.failure = "the CBC process returned a malformed result";
        return s;
    }
    return solved;
}

int runMipSolverHelper(int in, int out) {
    std::vector<char> bytes;
    if (!readRequest(in, bytes))
        return 2;
    std::vector<double> request;
    MipProblem problem;
    MipOptions options;
    if (!doublesFrom(bytes, request) || !decodeMipRequest(request, problem, options))
        return 2;
    const std::vector<double> reply = encodeMipSolution(solveMipInProcess(problem, options));
    return writeReply(out, reinterpret_cast<const char*>(reply.data()),
                      reply.size() * sizeof(double))
               ? 0
               : 3;
}

std::vector<double> encodeMipRequest(const MipProblem& problem, const MipOptions& options) {
    const int n = problem.numCols();
    std::vector<double> out{kRequestTag,
                            kWireVersion,
                            double(n),
                            double(problem.numRows()),
                            options.seconds,
                            double(options.maxNodes),
                            double((options.localBranching ? 1 : 0) | (options.rootCuts ? 2 : 0) |
                                   (options.feasibilityPump ? 4 : 0)),
                            double(options.startCols.size()),
                            double(options.strongBranching)};
    for (int c = 0; c < n; ++c) {
        out.push_back(problem.lower(c));
        out.push_back(problem.upper(c));
        out.push_back(problem.cost(c));
        out.push_back(problem.integer(c) ? 1.0 : 0.0);
    }
    for (const MipProblem::Row& r : problem.rows()) {
        out.push_back(r.lo);
        out.push_back(r.hi);
        out.push_back(double(r.terms.size()));
        for (const auto& [c, v] : r.terms) {
            out.push_back(double(c));
            out.push_back(v);
        }
    }
    for (int c : options.startCols)
        out.push_back(double(c));
    out.insert(out.end(), options.startValues.begin(), options.startValues.end());
    return out;
}

bool decodeMipRequest(const std::vector<double>& in, MipProblem& problem, MipOptions& options) {
    constexpr std::size_t kHeader = 9;
    std::size_t n = 0, m = 0, starts = 0;
    if (in.size() < kHeader || in[0] != kRequestTag || in[1] != kWireVersion || !count(in[2], n) ||
        !count(in[3], m) || !count(in[7], starts) || !std::isfinite(in[4]) || !std::isfinite(in[5]))
        return false;
    options.seconds = in[4];
    options.maxNodes = static_cast<int>(std::clamp(in[5], 0.0, 2e9));
    if (!std::isfinite(in[8]))
        return false;
    options.strongBranching = static_cast<int>(std::clamp(in[8], -1.0, 1000.0));
    const int flags = static_cast<int>(std::clamp(in[6], 0.0, 7.0));
    options.localBranching = (flags & 1) != 0;
    options.rootCuts = (flags & 2) != 0;
    options.feasibilityPump = (flags & 4) != 0;
    std::size_t at = kHeader;
    auto take = [&](double& v) {
        if (at >= in.size())
            return false;
        v = in[at++];
        return true;
    };
    problem = MipProblem{};
    for (std::size_t c = 0; c < n; ++c) {
        double lo, hi, cost, integer;
        if (!take(lo) || !take(hi) || !take(cost) || !take(integer))
            return false;
        problem.col(lo, hi, cost, integer != 0);
    }
    for (std::size_t r = 0; r < m; ++r) {
        double lo, hi, k;
        std::size_t terms = 0;
        if (!take(lo) || !take(hi) || !take(k) || !count(k, terms))
            return false;
        std::vector<std::pair<int, double>> row(terms);
        for (auto& [c, v] : row) {
            double col;
            std::size_t index = 0;
            if (!take(col) || !take(v) || !count(col, index) || index >= n)
                return false;
            c = static_cast<int>(index);
        }
        problem.row(row, lo, hi);
    }
    options.startCols.assign(starts, 0);
    options.startValues.assign(starts, 0.0);
    for (int& c : options.startCols) {
        double col;
        std::size_t index = 0;
        if (!take(col) || !count(col, index) || index >= n)
            return false;
        c = static_cast<int>(index);
    }
    for (double& v : options.startValues)
        if (!take(v))
            return false;
    return at == in.size();
}

std::vector<double> encodeMipSolution(const MipSolution& s) {
    std::vector<double> out{
        double(s.feasible), double(s.optimal),  double(s.infeasible),  s.objective, s.bound,
        s.seconds,          double(s.x.size()), double(s.more.size()), s.nodes};
    out.insert(out.end(), s.x.begin(), s.x.end());
    for (const auto& v : s.more)
        out.insert(out.end(), v.begin(), v.end());
    return out;
}

bool decodeMipSolution(const std::vector<double>& in, MipSolution& s) {
    std::size_t nx = 0, nmore = 0;
    if (in.size() < kSolutionHeader || !count(in[6], nx) || !count(in[7], nmore) ||
        in.size() != kSolutionHeader + nx * (1 + nmore))
        return false;
    s.feasible = in[0] != 0;
    s.optimal = in[1] != 0;
    s.infeasible = in[2] != 0;
    s.objective = in[3];
    s.bound = in[4];
    s.seconds = in[5];
    s.nodes = in[8];
    s.x.assign(in.begin() + kSolutionHeader, in.begin() + std::ptrdiff_t(kSolutionHeader + nx));
    s.more.clear();
    for (std::size_t k = 0; k < nmore; ++k) {
        const auto at = in.begin() + std::ptrdiff_t(kSolutionHeader + (k + 1) * nx);
        s.more.emplace_back(at, at + std::ptrdiff_t(nx));
    }
    return true;
}

} // namespace mw
