#include "explore/pareto.h"

#include "common/error.h"

#include <algorithm>

namespace mw {

const char* toString(SweepMetric m) {
    switch (m) {
    case SweepMetric::Energy:
        return "energy";
    case SweepMetric::Cycles:
        return "cycles";
    case SweepMetric::Edp:
        return "edp";
    case SweepMetric::Area:
        return "area";
    }
    return "?";
}

double metricValue(const PointRecord& r, SweepMetric m) {
    switch (m) {
    case SweepMetric::Energy:
        return r.energy * 1e-9;
    case SweepMetric::Cycles:
        return r.cycles;
    case SweepMetric::Edp:
        return r.edp;
    case SweepMetric::Area:
        return r.area * 1e-6;
    }
    return 0.0;
}

std::vector<SweepMetric> parseSweepMetrics(const std::string& text, const std::string& where) {
    std::vector<SweepMetric> out;
    std::size_t from = 0;
    for (;;) {
        const auto comma = text.find(',', from);
        const std::string name = text.substr(from, comma - from);
        bool known = false;
        for (SweepMetric m :
             {SweepMetric::Energy, SweepMetric::Cycles, SweepMetric::Edp, SweepMetric::Area})
            if (name == toString(m)) {
                if (std::find(out.begin(), out.end(), m) != out.end())
                    throw InputError(where, "names " + name + " twice");
                out.push_back(m);
                known = true;
            }
        if (!known)
            throw InputError(where, "has '" + name + "'; expected energy, cycles, edp or area");
        if (comma == std::string::npos)
            break;
        from = comma + 1;
    }
    if (out.size() < 2 || out.size() > 3)
        throw InputError(where,
                         "is '" + text + "'; expected two or three metrics, as energy,cycles");
    return out;
}

std::vector<std::size_t> paretoFront(const std::vector<PointRecord>& points,
                                     const std::vector<SweepMetric>& metrics) {
    std::vector<std::size_t> front;
    auto dominates = [&](const PointRecord& a, const PointRecord& b) {
        bool better = false;
        for (SweepMetric m : metrics) {
            const double va = metricValue(a, m), vb = metricValue(b, m);
            if (va > vb)
                return false;
            better = better || va < vb;
        }
        return better;
    };
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (!points[i].valid)
            continue;
        bool dominated = false;
        for (std::size_t j = 0; j < points.size() && !dominated; ++j)
            dominated = j != i && points[j].valid && dominates(points[j], points[i]);
        if (!dominated)
            front.push_back(i);
    }
    std::stable_sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
        return metricValue(points[a], metrics[0]) < metricValue(points[b], metrics[0]);
    });
    return front;
}

} // namespace mw
