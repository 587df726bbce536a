#include "io/timeloop/template.h"

#include "common/error.h"
#include "common/helper_process.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace mw {

namespace {

std::string helperPath() {
#ifdef MAPWRIGHT_JINJA_BUILD_PATH
    return findHelper("MAPWRIGHT_JINJA", "mapwright-jinja", MAPWRIGHT_JINJA_BUILD_PATH);
#else
    return findHelper("MAPWRIGHT_JINJA", "mapwright-jinja", nullptr);
#endif
}

bool endsWith(const std::string& s, const char* tail) {
    const std::string t(tail);
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

} // namespace

bool isTemplateFile(const std::string& name, const std::string& text) {
    if (endsWith(name, ".jinja") || endsWith(name, ".jinja2") || endsWith(name, ".j2"))
        return true;
    return text.find("{{") != std::string::npos || text.find("{%") != std::string::npos;
}

std::pair<std::string, std::string> parseTemplateSetting(const std::string& setting,
                                                         const std::string& where) {
    const auto eq = setting.find('=');
    if (eq == std::string::npos || eq == 0)
        throw InputError(where, "'" + setting +
                                    "': expected NAME=VALUE (the template's parse "
                                    "data, such as architecture=eyeriss_like)");
    const std::string name = setting.substr(0, eq);
    const bool identifier =
        std::all_of(name.begin(), name.end(),
                    [](unsigned char c) { return std::isalnum(c) || c == '_'; }) &&
        !std::isdigit(static_cast<unsigned char>(name[0]));
    if (!identifier)
        throw InputError(where, "'" + name +
                                    "': expected a template variable name (letters, "
                                    "digits and _)");
    return {name, setting.substr(eq + 1)};
}

namespace {

// The helper's reply to `request` (one entry per job), checked for shape.
nlohmann::json askHelper(const nlohmann::json& request, std::size_t jobs,
                         const std::string& where) {
    const std::string helper = helperPath();
    if (helper.empty())
        throw InputError(where, "is a Jinja2 template, and its helper mapwright-jinja was not "
                                "found beside the program (set MAPWRIGHT_JINJA to its path)");
    const std::string text = request.dump();
    // A minute per hundred jobs: rendering reads files and nothing else.
    const double patience = 60.0 + 0.6 * double(jobs);
    const HelperRun run = runHelper(helper, text.data(), text.size(), patience);
    if (run.outcome == HelperRun::Outcome::Overran)
        throw InputError(where, "rendering the template ran past " + std::to_string(int(patience)) +
                                    " s and was stopped");
    if (run.outcome != HelperRun::Outcome::Replied)
        throw InputError(where,
                         "the template helper mapwright-jinja " +
                             (run.failure.empty() ? std::string("gave no answer") : run.failure) +
                             " (it needs python3 and python3-jinja2)");
    nlohmann::json reply;
    try {
        reply = nlohmann::json::parse(run.reply.begin(), run.reply.end());
    } catch (const nlohmann::json::exception&) {
        throw InputError(where, "the template helper gave a malformed answer");
    }
    if (!reply.is_object() || !reply.contains("jobs") || !reply["jobs"].is_array() ||
        reply["jobs"].size() != jobs)
        throw InputError(where, "the template helper gave a malformed answer");
    return reply;
}

} // namespace

std::vector<std::string> templateVariables(const std::string& file) {
    const nlohmann::json request = {
        {"jobs", nlohmann::json::array({{{"file", file}, {"variables", true}}})}};
    const nlohmann::json reply = askHelper(request, 1, file);
    try {
        const auto& r = reply["jobs"][0];
        if (r.contains("error"))
            throw InputError(r.value("file", file), r.at("error").get<std::string>());
        return r.at("variables").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception&) {
        throw InputError(file, "the template helper gave a malformed answer");
    }
}

std::vector<RenderedTemplate> renderTemplates(const std::vector<TemplateJob>& jobs,
                                              const std::string& where) {
    if (jobs.empty())
        return {};
    nlohmann::json request = {{"jobs", nlohmann::json::array()}};
    for (const TemplateJob& job : jobs) {
        nlohmann::json data = nlohmann::json::object();
        for (const auto& [name, value] : job.data)
            data[name] = value;
        request["jobs"].push_back({{"file", job.file}, {"data", data}});
    }
    const nlohmann::json reply = askHelper(request, jobs.size(), where);
    std::vector<RenderedTemplate> out;
    try {
        for (const auto& r : reply["jobs"]) {
            RenderedTemplate t;
            if (r.contains("error")) {
                t.error = r.at("error").get<std::string>();
                t.errorFile = r.value("file", std::string());
            } else {
                t.top = r.at("top").get<std::string>();
                for (const auto& [path, body] : r.at("files").items())
                    t.files[path] = body.get<std::string>();
            }
            out.push_back(std::move(t));
        }
    } catch (const nlohmann::json::exception&) {
        throw InputError(where, "the template helper gave a malformed answer");
    }
    return out;
}

} // namespace mw
