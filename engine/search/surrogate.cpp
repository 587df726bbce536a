#include "search/surrogate.h"

#include "common/atomic_file.h"

#include "common/error.h"
#include "model/cost_model.h"
#include "search/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <system_error>
#include <thread>

namespace mw {

namespace {

constexpr std::uint32_t kSurrogateMagic = 0x4d575332;    // "MWS2": with a model fingerprint
constexpr std::uint32_t kSurrogateMagicOld = 0x4d575331; // "MWS1": before it

// The share of training's progress that is data generation: with the
// defaults, 100,000 samples take 0.6 s on 2 cores and 20 epochs 30 s, so
// the time left shown during the epochs stays close to the truth.
constexpr double kDataShare = 0.05;

double seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::uint64_t fnv(const std::string& s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s)
        h = (h ^ c) * 0x100000001b3ull;
    return h;
}

// The family of a problem: its dimension names and tensor structure.
std::string familyKey(const Problem& p) {
    std::ostringstream o;
    for (const auto& d : p.dims)
        o << d.name << ',';
    for (const auto& t : p.tensors) {
        o << t.name << (t.readWrite ? "*" : "") << '[';
        for (int r = 0; r < t.numRanks; ++r) {
            for (int i = 0; i < t.ranks[r].numTerms; ++i)
                o << t.ranks[r].terms[i].dim << 'x' << t.ranks[r].terms[i].coef << '+';
            o << ';';
        }
        o << ']';
    }
    return o.str();
}

std::string archKey(const Architecture& a) {
    std::ostringstream o;
    for (const auto& s : a.levels)
        o << s.name << int(s.cls) << ':' << s.capacityWords << ':' << s.wordBits << ':'
          << s.blockSize << ':' << s.meshX << 'x' << s.meshY << ':' << s.readBandwidth << ':'
          << s.writeBandwidth << ':' << s.multipleBuffering << ':' << s.energy.read << ':'
          << s.energy.write << ':' << s.energy.update << ':' << s.energy.leak
          << (s.clusterSize != 1 ? ":c" + std::to_string(s.clusterSize) : std::string())
          // (Only where given: the keys of the surrogates trained before it stand.)
          << (s.minUtilization > 0 ? ":u" + std::to_string(s.minUtilization) : std::string())
          << ';';
    o << a.compute.meshX << 'x' << a.compute.meshY << ':' << a.compute.macEnergy;
    return o.str();
}

// What the cost model makes of a few fixed mappings of a small problem of
// p's family on a (their energies to 1/16 pJ, cycles and validity): a
// surrogate learnt from another model's costs predicts the wrong ones, and
// this is how a load finds out. The mappings are drawn with a fixed seed from
// the unconstrained space.
std::uint64_t modelFingerprint(const Problem& p, const Architecture& a) {
    Problem q = p;
    for (auto& d : q.dims)
        d.bound = 4;
    std::uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
    try {
        const MapSpace space(q, a);
        Rng rng(0x6d6f64656cull);
        Evaluation e;
        for (int i = 0; i < 8; ++i) {
            Mapping m;
            mix(space.sampleLegal(rng, m, e, 200) ? 1 : 0);
            space.model().evaluate(m, e);
            mix(e.valid ? 1 : 0);
            mix(std::uint64_t(std::llround(e.energy * 16.0)));
            mix(std::uint64_t(e.cycles));
        }
    } catch (const InputError&) {
        mix(0xbad); // a family this architecture cannot hold at all
    }
    return h;
}

// A bound near b (x 2^u, u in [-1.5, 1.5]) with small prime factors, so the
// training shapes factor as real layers do; tiny bounds (kernels, batch 1)
// draw from their own small range.
std::int64_t nearbyBound(std::int64_t b, Rng& rng) {
    if (b == 1)
        return 1;
    if (b <= 7) {
        static const std::int64_t small[] = {1, 2, 3, 5, 7};
        return small[rng.below(5)];
    }
    const double target = double(b) * std::exp2(3.0 * rng.uniform() - 1.5);
    std::int64_t best = 8;
    for (std::int64_t two = 1; two <= 8192; two *= 2)
        for (std::int64_t three = 1; two * three <= 16384; three *= 3)
            for (std::int64_t seven = 1; two * three * seven <= 16384; seven *= 7) {
                const std::int64_t v = two * three * seven;
                if (v >= 8 && std::abs(std::log(double(v) / target)) <
                                  std::abs(std::log(double(best) / target)))
                    best = v;
            }
    return best;
}

// Mind Mappings' normaliser, its "algorithmic minimum" (digest 000 Sec. 5.4):
// every tensor element read (outputs: updated) once at every level of an
// inclusive hierarchy, every MAC busy. With bypass a mapping can beat it, so
// reports use lowerBound(); the surrogate keeps the paper's scale, which also
// keeps surrogates saved before that bound changed valid.
struct Normaliser {
    double energy = 0.0;
    double cycles = 0.0;
};
Normaliser algorithmicMinimum(const Problem& p, const Architecture& a) {
    double energy = double(p.computes()) * a.compute.macEnergy;
    for (const auto& s : a.levels) {
        if (s.cls == LevelClass::Dummy)
            continue;
        for (int t = 0; t < p.numTensors(); ++t)
            energy += double(p.tensorSize(t)) *
                      (p.tensors[t].readWrite ? s.energy.update : s.energy.read) / s.blockSize;
    }
    return {energy, double(p.computes()) / double(a.compute.instances())};
}

// The surrogate's targets for one evaluation (see Surrogate::outputCount).
void targets(const Evaluation& e, const Problem& p, const Architecture& a, float* out) {
    const Normaliser lb = algorithmicMinimum(p, a);
    int k = 0;
    const double perLevelBound = lb.energy / double(std::max(1, a.numLevels()));
    for (int l = 0; l < a.numLevels(); ++l)
        if (a.levels[l].cls != LevelClass::Dummy)
            out[k++] = float(std::log((e.levels[l].energy + 1e-3) / perLevelBound));
    out[k++] = float(e.utilization);
    out[k++] = float(std::log(e.energy / lb.energy));
    out[k++] = float(std::log(double(e.cycles) / lb.cycles));
}

std::vector<double> ranks(const std::vector<double>& v) {
    std::vector<std::size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < idx.size();) {
        std::size_t j = i;
        while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]])
            ++j;
        for (std::size_t k = i; k <= j; ++k)
            r[idx[k]] = 0.5 * double(i + j);
        i = j + 1;
    }
    return r;
}

} // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size() || a.size() < 2)
        return 0.0;
    const auto ra = ranks(a), rb = ranks(b);
    const double n = double(a.size());
    const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
    const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < ra.size(); ++i) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

// ------------------------------------------------------------------- codec

MappingCodec::MappingCodec(const Problem& p, const Architecture& a) {
    const MapSpace space(p, a);
    dims_ = p.numDims();
    int k = 0;
    for (int d = 0; d < dims_; ++d) {
        slots_.push_back(space.factorSlots(d));
        slotOffset_.push_back(k);
        k += int(slots_.back().size());
    }
    orderOffset_ = k;
    for (int l = 0; l < a.numLevels(); ++l)
        if (space.levelHasTemporal(l)) {
            orderLevels_.push_back(l);
            k += dims_;
        }
    keepOffset_ = k;
    for (int l = 1; l < a.numLevels(); ++l)
        if (a.levels[l].cls != LevelClass::Dummy)
            for (int t = 0; t < p.numTensors(); ++t)
                keepBits_.push_back({l, t});
    mappingFeatures_ = k + int(keepBits_.size());
}

std::string MappingCodec::signature() const {
    std::ostringstream o;
    o << dims_ << '/' << mappingFeatures_ << '/' << orderLevels_.size() << '/' << keepBits_.size();
    for (const auto& s : slots_)
        for (const auto& slot : s)
            o << ',' << int(slot.level) << int(slot.kind);
    return o.str();
}

void MappingCodec::encodeProblem(const Problem& p, float* out) const {
    for (int d = 0; d < dims_; ++d)
        out[d] = float(std::log2(double(p.dims[d].bound)));
}

void MappingCodec::encode(const Mapping& m, float* out) const {
    for (int d = 0; d < dims_; ++d)
        for (std::size_t s = 0; s < slots_[d].size(); ++s)
            out[slotOffset_[d] + int(s)] =
                float(std::log2(double(MapSpace::factorAt(m, d, slots_[d][s]))));
    const float span = float(std::max(1, dims_ - 1));
    for (std::size_t i = 0; i < orderLevels_.size(); ++i) {
        const LevelMapping& lm = m.levels[orderLevels_[i]];
        for (int pos = 0; pos < dims_; ++pos)
            out[orderOffset_ + int(i) * dims_ + lm.order[pos]] = float(pos) / span;
    }
    for (std::size_t i = 0; i < keepBits_.size(); ++i)
        out[keepOffset_ + int(i)] = m.levels[keepBits_[i].first].keeps(keepBits_[i].second);
}

bool MappingCodec::project(const float* x, const MapSpace& space, Mapping& out, Rng& rng,
                           Evaluation& scratch) const {
    const Problem& p = space.problem();
    out = makeTrivialMapping(p, space.arch());
    // Factors: each free prime, largest first, to the allowed slot whose
    // target log2 factor is furthest from being reached.
    for (int d = 0; d < dims_; ++d) {
        const auto& allowed = space.factorSlots(d);
        if (allowed.empty())
            continue;
        std::vector<double> deficit(allowed.size());
        for (std::size_t s = 0; s < allowed.size(); ++s) {
            const auto it = std::find_if(slots_[d].begin(), slots_[d].end(), [&](const auto& u) {
                return u.level == allowed[s].level && u.kind == allowed[s].kind;
            });
            deficit[s] = it == slots_[d].end()
                             ? 0.0
                             : double(x[dims_ + slotOffset_[d] + int(it - slots_[d].begin())]);
        }
        std::vector<std::uint32_t> primes = space.freePrimes(d);
        std::sort(primes.rbegin(), primes.rend());
        for (std::uint32_t prime : primes) {
            const std::size_t s =
                std::size_t(std::max_element(deficit.begin(), deficit.end()) - deficit.begin());
            MapSpace::factorAt(out, d, allowed[s]) *= prime;
            deficit[s] -= std::log2(double(prime));
        }
    }
    // Orders: argsort of the positions.
    for (std::size_t i = 0; i < orderLevels_.size(); ++i) {
        std::array<std::uint8_t, kMaxDims>& order = out.levels[orderLevels_[i]].order;
        std::vector<int> dims(static_cast<std::size_t>(dims_));
        std::iota(dims.begin(), dims.end(), 0);
        const float* pos = x + dims_ + orderOffset_ + int(i) * dims_;
        std::stable_sort(dims.begin(), dims.end(), [&](int a, int b) { return pos[a] < pos[b]; });
        for (int k = 0; k < dims_; ++k)
            order[std::size_t(k)] = std::uint8_t(dims[std::size_t(k)]);
    }
    for (std::size_t i = 0; i < keepBits_.size(); ++i)
        out.levels[keepBits_[i].first].setKeep(keepBits_[i].second,
                                               x[dims_ + keepOffset_ + int(i)] >= 0.5f);
    (void)p;
    return space.isLegal(out, scratch) || space.repair(out, rng, scratch);
}

// --------------------------------------------------------------- surrogate

int Surrogate::outputCount(const Architecture& a) {
    int n = 3;
    for (const auto& s : a.levels)
        n += s.cls != LevelClass::Dummy;
    return n;
}

Surrogate Surrogate::train(const Problem& p, const Architecture& a, const SurrogateOptions& o,
                           SurrogateReport& report, const Progress& progress) {
    Surrogate s;
    s.codec_ = MappingCodec(p, a);
    s.fingerprint_ = modelFingerprint(p, a);
    const int F = s.codec_.features();
    const int O = outputCount(a);
    s.energyOutput_ = O - 2;
    s.cyclesOutput_ = O - 1;
    const int shapes = std::max(1, (o.samples + o.mappingsPerShape - 1) / o.mappingsPerShape);
    const int perShape = std::max(1, o.samples / shapes);
    const int N = shapes * perShape;
    Eigen::MatrixXf X(F, N), Y(O, N);
    std::vector<double> trueEdp(static_cast<std::size_t>(N));

    // Data: random legal mappings of random shapes of the family, generated in
    // parallel; shape i uses its own RNG stream, so the data does not depend
    // on the thread count.
    double t0 = seconds();
    std::atomic<int> nextShape{0}, done{0};
    std::atomic<bool> cancelled{false};
    // Only the calling thread reports progress (and so may be told to stop),
    // after each shape it finishes: a cancel is seen within one shape.
    // Shape 0 is the target itself: its best mappings are kept (by true EDP).
    constexpr std::size_t kKeptTargets = 8;
    std::vector<std::pair<double, Mapping>> targetBest;
    auto work = [&](bool reports) {
        Evaluation e;
        for (int i = nextShape++; i < shapes && !cancelled; i = nextShape++) {
            Rng rng = Rng::stream(o.seed, 0x5a11, std::uint64_t(i));
            Problem q = p;
            for (auto& d : q.dims)
                d.bound = i == 0 ? d.bound : nearbyBound(d.bound, rng);
            const MapSpace space(q, a);
            for (int k = 0; k < perShape; ++k) {
                const int col = i * perShape + k;
                Mapping m;
                if (!space.sampleLegal(rng, m, e, 2000)) {
                    m = space.sample(rng);
                    space.repair(m, rng, e);
                }
                space.model().evaluate(m, e);
                s.codec_.encodeProblem(q, X.col(col).data());
                s.codec_.encode(m, X.col(col).data() + s.codec_.problemFeatures());
                if (!e.valid) { // a shape where nothing fits: a neutral, ignorable row
                    Y.col(col).setZero();
                    trueEdp[std::size_t(col)] = 0.0;
                    continue;
                }
                targets(e, q, a, Y.col(col).data());
                trueEdp[std::size_t(col)] =
                    double(Y(s.energyOutput_, col) + Y(s.cyclesOutput_, col));
                if (i == 0) { // one thread takes shape 0: no other touches targetBest
                    targetBest.emplace_back(e.edp, m);
                    std::stable_sort(
                        targetBest.begin(), targetBest.end(),
                        [](const auto& x, const auto& y) { return x.first < y.first; });
                    if (targetBest.size() > kKeptTargets)
                        targetBest.pop_back();
                }
            }
            ++done;
            if (reports && progress &&
                !progress("training data", kDataShare * double(done) / shapes))
                cancelled = true;
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < o.threads; ++t) {
        try {
            pool.emplace_back(work, false);
        } catch (const std::system_error&) {
            break; // the system's limit: the threads started share the shapes
        }
    }
    work(true); // the calling thread takes part

    for (auto& t : pool)
        t.join();
    report.generateSeconds = seconds() - t0;
    report.targetEvaluations = perShape;
    report.targetBest.clear();
    for (auto& [edp, m] : targetBest)
        report.targetBest.push_back(m);
    if (cancelled || (progress && !progress("training data", kDataShare)))
        throw std::runtime_error("surrogate training cancelled");

    // Hold out 10 % (the last shapes) for the accuracy report.
    const int test = std::max(1, N / 10);
    const int trainN = N - test;
    s.in_.fit(X.leftCols(trainN));
    s.out_.fit(Y.leftCols(trainN));
    const Eigen::MatrixXf Xn = s.in_.apply(X), Yn = s.out_.apply(Y);

    std::vector<int> widths = {F};
    if (o.paperLayers) {
        for (int w : {64, 256, 1024, 2048, 2048, 1024, 256, 64})
            widths.push_back(std::max(4, w / std::max(1, o.widthDivisor)));
    } else {
        for (int w : o.hidden)
            widths.push_back(w);
    }
    widths.push_back(O);
    Rng rng(o.seed);
    s.net_ = Mlp(widths, rng);
    report.parameters = s.net_.parameterCount();

    t0 = seconds();
    std::vector<int> order(static_cast<std::size_t>(trainN));
    std::iota(order.begin(), order.end(), 0);
    Eigen::MatrixXf xb, yb, grad;
    const int decayEvery = std::max(1, o.epochs / 4);
    float lr = o.learningRate;
    for (int epoch = 0; epoch < o.epochs; ++epoch) {
        if (epoch > 0 && epoch % decayEvery == 0)
            lr *= 0.1f;
        rng.shuffle(order.begin(), order.end());
        for (int start = 0; start < trainN; start += o.batch) {
            const int n = std::min(o.batch, trainN - start);
            xb.resize(F, n);
            yb.resize(O, n);
            for (int j = 0; j < n; ++j) {
                xb.col(j) = Xn.col(order[std::size_t(start + j)]);
                yb.col(j) = Yn.col(order[std::size_t(start + j)]);
            }
            huberLoss(s.net_.forward(xb), yb, grad);
            s.net_.backward(grad);
            s.net_.step(lr, 0.9f);
            // After every batch, not every epoch: an epoch of the paper's
            // layers takes tens of seconds, too long to wait for a cancel.
            if (progress &&
                !progress("training epoch " + std::to_string(epoch + 1) + "/" +
                              std::to_string(o.epochs),
                          kDataShare +
                              (1 - kDataShare) * (epoch + double(start + n) / trainN) / o.epochs))
                throw std::runtime_error("surrogate training cancelled");
        }
    }
    report.trainSeconds = seconds() - t0;
    report.samples = N;
    s.inference_ = MlpInference(s.net_);

    // Held-out accuracy: loss, and how well predicted EDP ranks true EDP.
    const Eigen::MatrixXf pred = s.net_.forward(Xn.rightCols(test));
    report.testLoss = huberLoss(pred, Yn.rightCols(test), grad);
    const Eigen::MatrixXf raw = s.out_.invert(pred);
    std::vector<double> predicted, actual;
    for (int j = 0; j < test; ++j) {
        const double t = trueEdp[std::size_t(trainN + j)];
        if (t == 0.0)
            continue;
        predicted.push_back(double(raw(s.energyOutput_, j) + raw(s.cyclesOutput_, j)));
        actual.push_back(t);
    }
    report.rankCorrelation = spearman(predicted, actual);
    return s;
}

double Surrogate::predict(const float* x, float* grad, SurrogateDescent descent) {
    const int F = codec_.features();
    standardized_.resize(std::size_t(F));
    for (int i = 0; i < F; ++i)
        standardized_[std::size_t(i)] = (x[i] - in_.mean[i]) / in_.stddev[i];
    const float* y = inference_.forward(standardized_.data());
    // log(EDP / bound) = log(E / E_lb) + log(C / C_lb), denormalised.
    const double value =
        double(y[energyOutput_] * out_.stddev[energyOutput_] + out_.mean[energyOutput_] +
               y[cyclesOutput_] * out_.stddev[cyclesOutput_] + out_.mean[cyclesOutput_]);
    if (grad) {
        const int O = inference_.outputs();
        dOutput_.assign(std::size_t(O), 0.0f);
        if (descent == SurrogateDescent::OutputSum) {
            std::fill(dOutput_.begin(), dOutput_.end(), 1.0f);
        } else {
            dOutput_[std::size_t(energyOutput_)] = out_.stddev[energyOutput_];
            dOutput_[std::size_t(cyclesOutput_)] = out_.stddev[cyclesOutput_];
        }
        inference_.inputGradient(dOutput_.data(), grad); // the weights stay frozen
        for (int i = 0; i < F; ++i)
            grad[i] /= in_.stddev[i]; // back to raw units
    }
    return value;
}

double Surrogate::descentObjective(const float* x, SurrogateDescent descent) {
    const double logEdp = predict(x);
    if (descent == SurrogateDescent::LogEdp)
        return logEdp;
    const float* y = inference_.forward(standardized_.data());
    double sum = 0.0;
    for (int i = 0; i < inference_.outputs(); ++i)
        sum += double(y[i]);
    return sum;
}

std::string Surrogate::cachePath(const std::string& dir, const Problem& p, const Architecture& a) {
    std::string base = dir;
    if (base.empty()) {
        if (const char* env = std::getenv("MAPWRIGHT_MODEL_DIR"); env && *env)
            base = env;
        else if (const char* home = std::getenv("HOME"); home && *home)
            base = std::string(home) + "/.cache/mapwright/models";
        else
            base = ".mapwright-models";
    }
    std::ostringstream name;
    name << base << "/mindmappings-" << std::hex << fnv(archKey(a)) << '-' << fnv(familyKey(p))
         << ".surrogate";
    return name.str();
}

std::string Surrogate::bundledPath(const Problem& p, const Architecture& a) {
    std::string dir;
    if (const char* env = std::getenv("MAPWRIGHT_BUNDLED_MODELS"); env && *env)
        dir = env;
#ifdef MAPWRIGHT_BUNDLED_MODEL_DIR
    else
        dir = MAPWRIGHT_BUNDLED_MODEL_DIR;
#endif
    return dir.empty() ? std::string() : cachePath(dir, p, a);
}

void Surrogate::save(const std::string& path) const {
    const std::filesystem::path fp(path);
    if (fp.has_parent_path())
        std::filesystem::create_directories(fp.parent_path());
    std::ostringstream out(std::ios::binary);
    const std::string sig = codec_.signature();
    out.write(reinterpret_cast<const char*>(&kSurrogateMagic), sizeof kSurrogateMagic);
    const std::uint32_t n = std::uint32_t(sig.size());
    out.write(reinterpret_cast<const char*>(&n), sizeof n);
    out.write(sig.data(), std::streamsize(sig.size()));
    out.write(reinterpret_cast<const char*>(&fingerprint_), sizeof fingerprint_);
    in_.save(out);
    out_.save(out);
    net_.save(out);
    writeFileAtomically(path, out.str());
}

Surrogate Surrogate::load(const std::string& path, const Problem& p, const Architecture& a) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path, "no trained surrogate here (train one first)");
    Surrogate s;
    s.codec_ = MappingCodec(p, a);
    try {
        std::uint32_t magic = 0, n = 0;
        in.read(reinterpret_cast<char*>(&magic), sizeof magic);
        in.read(reinterpret_cast<char*>(&n), sizeof n);
        if (in && magic == kSurrogateMagicOld)
            throw std::runtime_error("stale: made by an older Mapwright, before surrogates "
                                     "recorded their cost model");
        if (!in || magic != kSurrogateMagic || n > 1 << 16)
            throw std::runtime_error("not a Mapwright surrogate");
        std::string sig(n, '\0');
        in.read(sig.data(), n);
        if (sig != s.codec_.signature())
            throw std::runtime_error("made for another architecture or problem family");
        in.read(reinterpret_cast<char*>(&s.fingerprint_), sizeof s.fingerprint_);
        if (!in)
            throw std::runtime_error("not a Mapwright surrogate");
        if (s.fingerprint_ != modelFingerprint(p, a))
            throw std::runtime_error("stale: made with a cost model that gives other costs "
                                     "than this one");
        s.in_ = Standardizer::load(in);
        s.out_ = Standardizer::load(in);
        s.net_ = Mlp::load(in);
    } catch (const std::runtime_error& e) {
        throw InputError(path, e.what());
    }
    const int O = outputCount(a);
    if (s.net_.inputs() != s.codec_.features() || s.net_.outputs() != O)
        throw InputError(path, "has the wrong input or output size for this architecture");
    s.energyOutput_ = O - 2;
    s.cyclesOutput_ = O - 1;
    s.inference_ = MlpInference(s.net_);
    return s;
}

} // namespace mw
