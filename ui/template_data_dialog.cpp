#include "ui/template_data_dialog.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QVBoxLayout>

namespace mw::ui {

std::optional<TemplateData> askTemplateData(QWidget* parent, const QString& templatePath,
                                            const QStringList& variables) {
    QDialog dialog(parent);
    dialog.setWindowTitle("Template parse data");
    auto* layout = new QVBoxLayout(&dialog);
    const QFileInfo info(templatePath);
    auto* intro =
        new QLabel(QString("<b>%1</b> is a Jinja2 template. Give the values it reads "
                           "(paths are relative to its folder, %2).")
                       .arg(info.fileName().toHtmlEscaped(), info.absolutePath().toHtmlEscaped()));
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    layout->addLayout(form);
    QSettings settings;
    const QString key = "templateData/" + info.absoluteFilePath();
    std::vector<QComboBox*> fields;
    for (const QString& name : variables) {
        auto* field = new QComboBox;
        field->setEditable(true);
        field->setMinimumContentsLength(40);
        if (name == "architecture") {
            const QDir dir = info.absoluteDir();
            for (const QString& sub : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
                if (QFileInfo::exists(dir.filePath(sub + "/arch.yaml")))
                    field->addItem(sub);
        }
        if (settings.contains(key + "/" + name))
            field->setCurrentText(settings.value(key + "/" + name).toString());
        if (field->lineEdit())
            field->lineEdit()->setPlaceholderText("empty: the template's default, if it has one");
        field->setToolTip(QString("The template's variable '%1'").arg(name));
        form->addRow(name, field);
        fields.push_back(field);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted)
        return std::nullopt;
    TemplateData data;
    for (int i = 0; i < variables.size(); ++i) {
        const QString value = fields[std::size_t(i)]->currentText().trimmed();
        settings.setValue(key + "/" + variables[i], value);
        if (!value.isEmpty()) // left empty: the template's own default applies
            data.emplace_back(variables[i].toStdString(), value.toStdString());
    }
    return data;
}

} // namespace mw::ui
