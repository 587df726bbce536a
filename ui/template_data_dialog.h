#pragma once
// Asks for a Jinja2 top file's parse data (the front end's jinja_parse_data,
// `--set NAME=VALUE` on the command line): one field per variable the
// template uses and does not set. A variable named `architecture` offers the
// template folder's designs (the subfolders holding an arch.yaml).
#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <utility>
#include <vector>

class QWidget;

namespace mw::ui {

using TemplateData = std::vector<std::pair<std::string, std::string>>;

// The values entered, or nothing when cancelled. The last values entered for
// a template are offered again.
std::optional<TemplateData> askTemplateData(QWidget* parent, const QString& templatePath,
                                            const QStringList& variables);

} // namespace mw::ui
