#include "ui/workload_editor.h"

#include "common/error.h"
#include "io/json_io.h"
#include "io/onnx_import.h"

#include <QAction>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStringList>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>
#include <utility>

namespace mw::ui {

namespace {

constexpr int kNameColumn = 0;
constexpr int kKindColumn = 1;
constexpr int kFirstParamColumn = 2;

const std::string kCustomKind = "custom";

QString formatCount(std::int64_t n) {
    return QLocale().toString(static_cast<qlonglong>(n));
}

// "4.09 G": the scale an architect reads at a glance; the exact count goes next to it.
QString shortCount(std::int64_t n) {
    static const char* const units[] = {"", "k", "M", "G", "T", "P", "E"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1000.0 && u < 6) {
        v /= 1000.0;
        ++u;
    }
    if (u == 0)
        return QString::number(n) + " ";
    return QString::number(v, 'f', v < 10.0 ? 2 : (v < 100.0 ? 1 : 0)) + " " + units[u];
}

// Problem::computes() would overflow silently (undefined behaviour) on absurd
// shapes; the editor multiplies the same bounds but notices the overflow.
std::optional<std::int64_t> checkedMacs(const Problem& p) {
    std::int64_t n = 1;
    for (const Dimension& d : p.dims)
        if (__builtin_mul_overflow(n, d.bound, &n))
            return std::nullopt;
    return n;
}

std::string layerWhere(const std::string& name) {
    return "layer '" + name + "'";
}

// Formats like every other engine error, so messages read the same everywhere.
QString inputError(const std::string& where, const std::string& what) {
    return QString::fromStdString(InputError(where, what).what());
}

int presetIndex(const PresetInfo& info, const std::string& key) {
    for (std::size_t i = 0; i < info.params.size(); ++i)
        if (info.params[i].first == key)
            return static_cast<int>(i);
    return -1;
}

bool hasParam(const LayerSpec& l, const std::string& key) {
    return std::any_of(l.params.begin(), l.params.end(),
                       [&](const auto& p) { return p.first == key; });
}

QString customTip(const LayerSpec& l) {
    QStringList dims;
    for (const Dimension& d : l.custom.dims)
        dims << QString("%1=%2")
                    .arg(QString::fromStdString(d.name))
                    .arg(static_cast<qlonglong>(d.bound));
    return WorkloadEditor::tr("Custom problem; dimension bounds: %1.\n"
                              "Custom layers cannot be edited cell-wise: edit the workload "
                              "JSON and import it again.")
        .arg(dims.isEmpty() ? WorkloadEditor::tr("none") : dims.join(", "));
}

QString presetKindList() {
    QStringList kinds;
    for (const PresetInfo& info : presetCatalog())
        kinds << QString::fromStdString(info.kind);
    return kinds.join(", ");
}

// User text quoted in an error: long pastes would swamp the message.
std::string quoted(const QString& text) {
    const QString t = text.trimmed();
    // (Quoted as a QString: with the precompiled headers, GCC 12 at -O3 warns
    // falsely of an out-of-bounds memcpy in "'" + std::string, inlined here.)
    return (u'\'' + (t.size() > 24 ? t.left(24) + QString::fromUtf8("…") : t) + u'\'')
        .toStdString();
}

} // namespace

WorkloadEditor::WorkloadEditor(QWidget* parent) : QWidget(parent) {
    // Shapes first, coefficients last: a preset's coefficients are the
    // parameters its default problem lists as Problem::coefficients.
    std::vector<std::string> shapes, coefficients;
    for (const PresetInfo& info : presetCatalog()) {
        std::vector<std::string> coefNames;
        try {
            for (const auto& c : buildProblem(presetLayer(info.kind, info.kind)).coefficients)
                coefNames.push_back(c.first);
        } catch (const std::exception&) {
            // A broken preset only loses the shapes/coefficients split.
        }
        for (const auto& [key, value] : info.params) {
            const auto seen = [&key = key](const std::vector<std::string>& v) {
                return std::find(v.begin(), v.end(), key) != v.end();
            };
            if (seen(shapes) || seen(coefficients))
                continue;
            (seen(coefNames) ? coefficients : shapes).push_back(key);
        }
    }
    params_ = shapes;
    params_.insert(params_.end(), coefficients.begin(), coefficients.end());

    header_ = new QLabel(this);
    header_->setTextFormat(Qt::RichText);
    header_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    addButton_ = new QToolButton(this);
    addButton_->setText(tr("Add layer"));
    addButton_->setToolButtonStyle(Qt::ToolButtonTextOnly);
    addButton_->setPopupMode(QToolButton::InstantPopup);
    addButton_->setToolTip(tr("Append a layer of a preset kind with its default parameters"));
    auto* menu = new QMenu(addButton_);
    menu->setToolTipsVisible(true);
    for (const PresetInfo& info : presetCatalog()) {
        QAction* action = menu->addAction(QString::fromStdString(info.kind));
        action->setToolTip(QString::fromStdString(info.description));
        action->setStatusTip(QString::fromStdString(info.description));
        const QString kind = QString::fromStdString(info.kind);
        connect(action, &QAction::triggered, this, [this, kind] { addPresetLayer(kind); });
    }
    addButton_->setMenu(menu);

    removeButton_ = new QPushButton(tr("Remove"), this);
    removeButton_->setToolTip(tr("Remove the selected layer"));
    connect(removeButton_, &QPushButton::clicked, this, [this] { removeLayer(currentLayer()); });

    importButton_ = new QPushButton(tr("Import network…"), this);
    importButton_->setToolTip(tr("Replace the network with an ONNX model's layers or a workload "
                                 "JSON file"));
    connect(importButton_, &QPushButton::clicked, this, &WorkloadEditor::onImportClicked);

    const int columns = kFirstParamColumn + static_cast<int>(params_.size()) + 2; // MACs, source
    table_ = new QTableWidget(0, columns, this);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                            QAbstractItemView::AnyKeyPressed);
    table_->setAlternatingRowColors(false); // grey marks cells that do not apply
    table_->horizontalHeader()->setHighlightSections(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);

    auto setHeader = [this](int column, const QString& text, const QString& tip) {
        auto* item = new QTableWidgetItem(text);
        item->setToolTip(tip);
        table_->setHorizontalHeaderItem(column, item);
    };
    setHeader(kNameColumn, tr("Name"), tr("Layer name, unique within the network"));
    setHeader(kKindColumn, tr("Kind"), tr("Preset kind (read-only)"));
    for (std::size_t i = 0; i < params_.size(); ++i) {
        QStringList kinds;
        for (const PresetInfo& info : presetCatalog())
            if (presetIndex(info, params_[i]) >= 0)
                kinds << QString::fromStdString(info.kind);
        setHeader(
            kFirstParamColumn + static_cast<int>(i), QString::fromStdString(params_[i]),
            tr("%1, a parameter of %2").arg(QString::fromStdString(params_[i]), kinds.join(", ")));
    }
    setHeader(macsColumn(), tr("MACs"),
              tr("Multiply-accumulates of the layer: the product of its dimension bounds "
                 "(read-only)"));
    setHeader(sourceColumn(), tr("Imported from"),
              tr("The node of the ONNX model the layer was imported from (read-only)"));

    connect(table_, &QTableWidget::itemChanged, this, &WorkloadEditor::onItemChanged);
    connect(table_, &QTableWidget::itemSelectionChanged, this, [this] { syncCurrentLayer(false); });

    error_ = new QLabel(this);
    error_->setTextFormat(Qt::PlainText);
    error_->setWordWrap(true);
    error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    error_->setStyleSheet("QLabel { color: #c62828; }");
    error_->hide();

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(addButton_);
    buttons->addWidget(removeButton_);
    buttons->addWidget(importButton_);
    buttons->addStretch(1);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(header_);
    layout->addLayout(buttons);
    layout->addWidget(table_, 1);
    layout->addWidget(error_);

    rebuildTable();
    updateButtons();
}

void WorkloadEditor::setNetwork(const mw::Network& n) {
    replaceNetwork(n, false);
}

const mw::Network& WorkloadEditor::network() const {
    return network_;
}

int WorkloadEditor::currentLayer() const {
    return selectedRow();
}

void WorkloadEditor::setCurrentLayer(int index) {
    if (index < 0 || index >= layerCount())
        index = -1;
    selectRow(index);
    if (index >= 0)
        table_->scrollToItem(table_->item(index, kNameColumn));
    syncCurrentLayer(false);
}

bool WorkloadEditor::setCell(int row, const QString& column, const QString& text) {
    return applyEdit(row, column, text);
}

bool WorkloadEditor::addPresetLayer(const QString& kind) {
    const std::string k = kind.trimmed().toStdString();
    if (!findPreset(k))
        return fail(inputError("kind", quoted(kind) + " is not a preset; expected " +
                                           presetKindList().toStdString()));
    LayerSpec layer;
    try {
        layer = presetLayer(k, uniqueName(k));
        buildProblem(layer); // defaults are valid, but a layer only enters checked
    } catch (const std::exception& e) {
        return fail(QString::fromStdString(e.what()));
    }
    network_.layers.push_back(std::move(layer));
    const int row = layerCount() - 1;
    {
        const QSignalBlocker block(table_);
        table_->insertRow(row);
    }
    fillRow(row);
    clearError();
    updateHeader();
    updateColumnVisibility();
    table_->resizeColumnToContents(kNameColumn);
    selectRow(row);
    table_->scrollToItem(table_->item(row, kNameColumn));
    emit networkChanged(network_);
    syncCurrentLayer(false);
    return true;
}

bool WorkloadEditor::removeLayer(int row) {
    if (row < 0 || row >= layerCount())
        return fail(inputError("row " + std::to_string(row),
                               "no such layer; the network has " + std::to_string(layerCount())));
    const std::string where = layerWhere(network_.layers[static_cast<std::size_t>(row)].name);
    // The workload format (and every search) needs at least one layer.
    if (layerCount() == 1)
        return fail(inputError(where, "is the only layer; a network needs at least one"));
    const int current = currentLayer();
    network_.layers.erase(network_.layers.begin() + row);
    {
        const QSignalBlocker block(table_);
        table_->removeRow(row);
    }
    clearError();
    updateHeader();
    updateColumnVisibility();
    int next = current;
    if (current > row)
        next = current - 1;
    else if (current == row)
        next = std::min(row, layerCount() - 1);
    selectRow(next);
    emit networkChanged(network_);
    // Same index, different layer: listeners must still refresh.
    syncCurrentLayer(current == row);
    return true;
}

bool WorkloadEditor::importNetwork(const QString& path, QStringList* notes) {
    Network n;
    try {
        std::vector<std::string> said;
        n = loadNetworkFile(QFile::encodeName(path).toStdString(), {}, &said);
        for (const auto& note : said)
            if (notes)
                notes->append(QString::fromStdString(note));
    } catch (const InputError& e) {
        return fail(QString::fromStdString(e.what()));
    } catch (const std::exception& e) { // I/O or allocation failures outside InputError
        return fail(path + ": " + QString::fromStdString(e.what()));
    }
    replaceNetwork(std::move(n), true);
    return true;
}

void WorkloadEditor::setImportedNetwork(Network n) {
    replaceNetwork(std::move(n), true);
}

QString WorkloadEditor::lastError() const {
    return lastError_;
}

void WorkloadEditor::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    // The grey of inapplicable cells comes from the palette.
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        for (int row = 0; row < layerCount(); ++row)
            fillRow(row);
}

int WorkloadEditor::layerCount() const {
    return static_cast<int>(network_.layers.size());
}

int WorkloadEditor::paramColumn(const std::string& param) const {
    const auto it = std::find(params_.begin(), params_.end(), param);
    if (it == params_.end())
        return -1;
    return kFirstParamColumn + static_cast<int>(it - params_.begin());
}

int WorkloadEditor::macsColumn() const {
    return kFirstParamColumn + static_cast<int>(params_.size());
}

int WorkloadEditor::sourceColumn() const {
    return macsColumn() + 1;
}

QString WorkloadEditor::columnKey(int column) const {
    if (column == kNameColumn)
        return "name";
    if (column >= kFirstParamColumn && column < macsColumn())
        return QString::fromStdString(
            params_[static_cast<std::size_t>(column - kFirstParamColumn)]);
    return {};
}

bool WorkloadEditor::applyEdit(int row, const QString& column, const QString& text) {
    if (row < 0 || row >= layerCount())
        return fail(inputError("row " + std::to_string(row),
                               "no such layer; the network has " + std::to_string(layerCount())));
    LayerSpec edited = network_.layers[static_cast<std::size_t>(row)];
    const std::string where = layerWhere(edited.name);
    const std::string key = column.toStdString();
    int resizeColumn = kNameColumn;

    // Rejections restore the cell: the table must never show a value the network lacks.
    auto reject = [&](const QString& message) {
        fillRow(row);
        return fail(message);
    };

    if (key == "name") {
        const std::string name = text.trimmed().toStdString();
        if (name.empty())
            return reject(inputError(where + ".name", "is empty; expected a layer name"));
        if (name == edited.name) {
            fillRow(row);
            clearError();
            return true;
        }
        // Layers are looked up by name (sessions, --layer, network search).
        const int other = network_.layerIndex(name);
        if (other >= 0 && other != row)
            return reject(inputError(where + ".name", "'" + name + "' is already the name of row " +
                                                          std::to_string(other + 1)));
        if (edited.custom.name == edited.name)
            edited.custom.name = name;
        edited.name = name;
    } else {
        if (edited.kind == kCustomKind)
            return reject(inputError(where + "." + key,
                                     "custom layers cannot be edited cell-wise; edit the workload "
                                     "JSON and import it again"));
        const PresetInfo* info = findPreset(edited.kind);
        if (!info)
            return reject(inputError(where + ".kind", "is '" + edited.kind + "'; expected one of " +
                                                          presetKindList().toStdString()));
        const int index = presetIndex(*info, key);
        if (index < 0)
            return reject(inputError(where + "." + key, "is not a parameter of " + edited.kind));
        bool ok = false;
        const qlonglong value = text.trimmed().toLongLong(&ok, 10);
        if (!ok || value <= 0)
            return reject(inputError(where + "." + key,
                                     "is " + quoted(text) + "; expected a positive integer"));
        const std::int64_t v = value;
        const std::int64_t fallback = info->params[static_cast<std::size_t>(index)].second;
        if (edited.param(key, fallback) == v) {
            fillRow(row);
            clearError();
            return true;
        }
        auto& params = edited.params;
        const auto it = std::find_if(params.begin(), params.end(),
                                     [&](const auto& p) { return p.first == key; });
        if (it != params.end()) {
            it->second = v;
        } else {
            // A defaulted parameter becomes explicit, in catalog order so the
            // saved file reads like the preset.
            const auto pos = std::find_if(params.begin(), params.end(), [&](const auto& p) {
                const int i = presetIndex(*info, p.first);
                return i < 0 || i > index;
            });
            params.insert(pos, {key, v});
        }
        resizeColumn = paramColumn(key);
    }

    try {
        const Problem problem = buildProblem(edited);
        if (!checkedMacs(problem))
            return reject(
                inputError(where + "." + key, "makes the layer's MAC count overflow 64 bits"));
    } catch (const InputError& e) {
        return reject(QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return reject(QString::fromStdString(where + ": " + e.what()));
    }

    network_.layers[static_cast<std::size_t>(row)] = std::move(edited);
    fillRow(row);
    clearError();
    updateHeader();
    table_->resizeColumnToContents(resizeColumn);
    table_->resizeColumnToContents(macsColumn());
    emit networkChanged(network_);
    return true;
}

void WorkloadEditor::replaceNetwork(mw::Network n, bool notify) {
    network_ = std::move(n);
    clearError();
    rebuildTable();
    selectRow(layerCount() > 0 ? 0 : -1);
    if (notify)
        emit networkChanged(network_);
    syncCurrentLayer(true); // a new network: row 0 is a different layer
}

void WorkloadEditor::rebuildTable() {
    {
        const QSignalBlocker block(table_);
        table_->setRowCount(layerCount());
    }
    for (int row = 0; row < layerCount(); ++row)
        fillRow(row);
    updateHeader();
    updateColumnVisibility();
    table_->resizeColumnsToContents();
}

QTableWidgetItem* WorkloadEditor::cell(int row, int column) {
    QTableWidgetItem* item = table_->item(row, column);
    if (!item) {
        item = new QTableWidgetItem;
        table_->setItem(row, column, item);
    }
    return item;
}

// Updates the row's items in place: this also runs inside itemChanged, where
// replacing the item being committed would delete it under Qt's feet.
void WorkloadEditor::fillRow(int row) {
    const QSignalBlocker block(table_);
    const LayerSpec& l = network_.layers[static_cast<std::size_t>(row)];
    const bool custom = l.kind == kCustomKind;
    const PresetInfo* info = custom ? nullptr : findPreset(l.kind);
    const QString customNote = custom ? customTip(l) : QString();

    QString problemError;
    std::optional<std::int64_t> macs;
    try {
        macs = checkedMacs(buildProblem(l));
    } catch (const std::exception& e) {
        problemError = QString::fromStdString(e.what());
    }
    const bool valid = problemError.isEmpty();

    const Qt::ItemFlags readOnly = Qt::ItemIsSelectable | Qt::ItemIsEnabled;
    const Qt::ItemFlags editable = readOnly | Qt::ItemIsEditable;
    const QBrush grey = palette().brush(QPalette::Window);
    const QColor red(0xc6, 0x28, 0x28);
    auto reset = [](QTableWidgetItem* item) {
        item->setData(Qt::BackgroundRole, QVariant());
        item->setData(Qt::ForegroundRole, QVariant());
        item->setData(Qt::FontRole, QVariant());
        item->setToolTip(QString());
    };
    const auto joinTips = [](const QString& a, const QString& b) {
        return a.isEmpty() ? b : (b.isEmpty() ? a : a + "\n" + b);
    };

    QTableWidgetItem* name = cell(row, kNameColumn);
    reset(name);
    name->setText(QString::fromStdString(l.name));
    name->setFlags(editable);
    name->setToolTip(joinTips(
        joinTips(problemError, customNote),
        l.source.empty() ? QString() : tr("from %1").arg(QString::fromStdString(l.source))));

    QTableWidgetItem* source = cell(row, sourceColumn());
    reset(source);
    source->setText(QString::fromStdString(l.source));
    source->setFlags(readOnly);

    QTableWidgetItem* kind = cell(row, kKindColumn);
    reset(kind);
    kind->setText(QString::fromStdString(l.kind));
    kind->setFlags(readOnly);
    if (custom)
        kind->setToolTip(customNote);
    else if (info)
        kind->setToolTip(QString::fromStdString(info->description));
    else
        kind->setToolTip(tr("Unknown kind; expected one of %1").arg(presetKindList()));

    for (std::size_t i = 0; i < params_.size(); ++i) {
        const std::string& key = params_[i];
        QTableWidgetItem* item = cell(row, kFirstParamColumn + static_cast<int>(i));
        reset(item);
        const int index = info ? presetIndex(*info, key) : -1;
        if (index < 0) {
            item->setText(QString());
            item->setFlags(readOnly);
            item->setBackground(grey);
            if (custom)
                item->setToolTip(customNote);
            else if (info)
                item->setToolTip(
                    tr("%1 is not a parameter of %2")
                        .arg(QString::fromStdString(key), QString::fromStdString(l.kind)));
            continue;
        }
        const std::int64_t fallback = info->params[static_cast<std::size_t>(index)].second;
        item->setText(QString::number(static_cast<qlonglong>(l.param(key, fallback))));
        item->setFlags(editable);
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        if (!hasParam(l, key)) {
            // Files may omit parameters; show the value the engine will use, marked.
            QFont font = table_->font();
            font.setItalic(true);
            item->setFont(font);
            item->setToolTip(
                tr("Default of %1 (not set in the workload)").arg(QString::fromStdString(l.kind)));
        }
    }

    QTableWidgetItem* count = cell(row, macsColumn());
    reset(count);
    count->setFlags(readOnly);
    count->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    if (!valid) {
        count->setText(tr("invalid"));
        count->setForeground(red);
        count->setToolTip(problemError);
    } else if (!macs) {
        count->setText(tr("overflow"));
        count->setForeground(red);
        count->setToolTip(tr("The product of the dimension bounds exceeds 64 bits"));
    } else {
        count->setText(formatCount(*macs));
        count->setToolTip(joinTips(tr("%1MACs").arg(shortCount(*macs)), customNote));
    }
}

void WorkloadEditor::updateHeader() {
    std::int64_t total = 0;
    bool overflow = false;
    int invalid = 0;
    for (const LayerSpec& l : network_.layers) {
        try {
            const std::optional<std::int64_t> m = checkedMacs(buildProblem(l));
            if (!m || __builtin_add_overflow(total, *m, &total))
                overflow = true;
        } catch (const std::exception&) {
            ++invalid;
        }
    }
    const QString name =
        network_.name.empty() ? tr("(unnamed network)") : QString::fromStdString(network_.name);
    QString text = QString("<b>%1</b> &nbsp;·&nbsp; %2 &nbsp;·&nbsp; ")
                       .arg(name.toHtmlEscaped(),
                            layerCount() == 1 ? tr("1 layer") : tr("%1 layers").arg(layerCount()));
    if (overflow)
        text += tr("total MACs overflow 64 bits");
    else
        text += tr("%1MACs (%2)").arg(shortCount(total), formatCount(total));
    if (invalid > 0)
        text += QString(" &nbsp;·&nbsp; <span style=\"color:#c62828\">%1</span>")
                    .arg(invalid == 1 ? tr("1 invalid layer, not counted")
                                      : tr("%1 invalid layers, not counted").arg(invalid));
    header_->setText(text);
    header_->setToolTip(QString::fromStdString(network_.description));
}

void WorkloadEditor::updateColumnVisibility() {
    // Only the parameters some layer uses: a ResNet needs no GEMM or MTTKRP columns.
    for (std::size_t i = 0; i < params_.size(); ++i) {
        bool used = false;
        for (const LayerSpec& l : network_.layers) {
            const PresetInfo* info = l.kind == kCustomKind ? nullptr : findPreset(l.kind);
            used = used || (info && presetIndex(*info, params_[i]) >= 0);
        }
        table_->setColumnHidden(kFirstParamColumn + static_cast<int>(i), !used);
    }
    const bool imported = std::any_of(network_.layers.begin(), network_.layers.end(),
                                      [](const LayerSpec& l) { return !l.source.empty(); });
    table_->setColumnHidden(sourceColumn(), !imported);
}

void WorkloadEditor::updateButtons() {
    const int row = currentLayer();
    removeButton_->setEnabled(row >= 0 && layerCount() > 1);
    if (row < 0)
        removeButton_->setToolTip(tr("Select a layer to remove"));
    else if (layerCount() <= 1)
        removeButton_->setToolTip(tr("A network needs at least one layer"));
    else
        removeButton_->setToolTip(
            tr("Remove layer '%1'")
                .arg(QString::fromStdString(network_.layers[static_cast<std::size_t>(row)].name)));
}

void WorkloadEditor::syncCurrentLayer(bool force) {
    const int row = currentLayer();
    updateButtons();
    if (!force && row == currentRow_)
        return;
    currentRow_ = row;
    emit currentLayerChanged(row);
}

int WorkloadEditor::selectedRow() const {
    // Selection, not the current index: a deselected row is no current layer.
    const QModelIndexList selected = table_->selectionModel()->selectedIndexes();
    return selected.isEmpty() ? -1 : selected.front().row();
}

void WorkloadEditor::selectRow(int row) {
    const QSignalBlocker block(table_);
    if (row < 0) {
        table_->clearSelection();
        table_->setCurrentItem(nullptr);
        return;
    }
    // Keep the column so keyboard editing continues where it was.
    int column = table_->currentColumn();
    if (column < 0 || table_->isColumnHidden(column))
        column = kNameColumn;
    table_->setCurrentCell(row, column);
    table_->selectRow(row);
}

bool WorkloadEditor::fail(const QString& message) {
    lastError_ = message;
    error_->setText(message);
    error_->show();
    return false;
}

void WorkloadEditor::clearError() {
    lastError_.clear();
    error_->clear();
    error_->hide();
}

void WorkloadEditor::onItemChanged(QTableWidgetItem* item) {
    const QString key = columnKey(item->column());
    if (key.isEmpty()) { // read-only columns: put the shown value back
        fillRow(item->row());
        return;
    }
    applyEdit(item->row(), key, item->text());
}

void WorkloadEditor::onImportClicked() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Import network"), lastDir_,
        tr("Network (*.onnx *.json *.yaml *.yml);;ONNX model (*.onnx);;Workload JSON (*.json);;"
           "Timeloop problem (*.yaml *.yml);;All files (*)"));
    if (path.isEmpty())
        return;
    lastDir_ = QFileInfo(path).absolutePath();
    emit importRequested(path); // the window reads ONNX on a worker thread
}

std::string WorkloadEditor::uniqueName(const std::string& kind) const {
    for (int i = layerCount() + 1;; ++i) {
        const std::string name = kind + "_" + std::to_string(i);
        if (network_.layerIndex(name) < 0)
            return name;
    }
}

} // namespace mw::ui
