#include "ui/architecture_editor.h"

#include "common/error.h"
#include "ui/hierarchy_drawing.h"
#include "ui/level_fields.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QToolButton>
#include <QUndoCommand>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

namespace mw::ui {

// Switches the editor between two validated architectures (and the selection
// that goes with each). QUndoStack::push calls redo() once, which applies the edit.
class ArchitectureEditor::EditCommand : public QUndoCommand {
  public:
    EditCommand(ArchitectureEditor* editor, Architecture before, Architecture after,
                int selectionBefore, int selectionAfter, const QString& text)
        : QUndoCommand(text), editor_(editor), before_(std::move(before)), after_(std::move(after)),
          selectionBefore_(selectionBefore), selectionAfter_(selectionAfter) {}

    void redo() override {
        if (editor_)
            editor_->apply(after_, selectionAfter_);
    }
    void undo() override {
        if (editor_)
            editor_->apply(before_, selectionBefore_);
    }

  private:
    QPointer<ArchitectureEditor> editor_; // the stack may outlive the editor
    Architecture before_;
    Architecture after_;
    int selectionBefore_;
    int selectionAfter_;
};

namespace {

// A new level: a 1024-word SRAM, priced by the estimator like every level
// whose energies nobody typed.
constexpr std::int64_t kNewLevelWords = 1024;

std::string unusedName(const Architecture& a, const std::string& base) {
    std::string name = base;
    for (int i = 2; a.levelIndex(name) >= 0 || name == a.compute.name; ++i)
        name = base + "_" + std::to_string(i);
    return name;
}

// How a value's source reads in the panel (an imported area came from an
// ART, an energy from an ERT), and its colour.
QString sourceText(ValueSource s, bool area) {
    switch (s) {
    case ValueSource::Estimated:
        return QStringLiteral("estimated");
    case ValueSource::Imported:
        return area ? QStringLiteral("ART") : QStringLiteral("ERT");
    case ValueSource::Typed:
        return QStringLiteral("typed");
    }
    return {};
}

QString sourceStyle(ValueSource s) {
    switch (s) {
    case ValueSource::Estimated:
        return QStringLiteral("color: #4a5563;");
    case ValueSource::Imported:
        return QStringLiteral("color: #1f5fa8; font-weight: bold;");
    case ValueSource::Typed:
        return QStringLiteral("color: #a35a00; font-weight: bold;");
    }
    return {};
}

bool differs(double a, double b) {
    return std::abs(a - b) > 5e-3 * std::max(std::abs(a), std::abs(b));
}

} // namespace

ArchitectureEditor::ArchitectureEditor(QUndoStack* undo, QWidget* parent)
    : QWidget(parent), undo_(undo), scene_(new QGraphicsScene(this)) {
    Q_ASSERT(undo_);
    view_ = new HierarchyView(
        scene_, [this](int index) { selectLevel(index); }, this);
    technology_ = new QLineEdit;
    technology_->setMaximumWidth(60);
    technology_->setToolTip(tr("The process node every estimated energy and area is priced at "
                               "(7 to 130 nm; Stillmaker-Baas scaling from 45 nm)"));
    connect(technology_, &QLineEdit::editingFinished, this,
            [this] { setTechnology(technology_->text()); });

    auto* addButton = new QPushButton(tr("Add level"));
    addButton->setToolTip(tr("Insert a new SRAM level inside the selected level"));
    connect(addButton, &QPushButton::clicked, this, [this] {
        const int n = arch_.numLevels();
        addLevel(selected_ >= 0 && selected_ < n ? selected_ + 1 : n);
    });
    removeButton_ = new QPushButton(tr("Remove level"));
    connect(removeButton_, &QPushButton::clicked, this, [this] { removeLevel(selected_); });
    upButton_ = new QPushButton(tr("Move up"));
    upButton_->setToolTip(tr("Move the selected level outwards (towards DRAM)"));
    connect(upButton_, &QPushButton::clicked, this, [this] { moveLevel(selected_, -1); });
    downButton_ = new QPushButton(tr("Move down"));
    downButton_->setToolTip(tr("Move the selected level inwards (towards the MACs)"));
    connect(downButton_, &QPushButton::clicked, this, [this] { moveLevel(selected_, 1); });

    auto* undoButton = new QPushButton(tr("Undo"));
    undoButton->setEnabled(undo_->canUndo());
    connect(undoButton, &QPushButton::clicked, undo_, &QUndoStack::undo);
    connect(undo_, &QUndoStack::canUndoChanged, undoButton, &QWidget::setEnabled);
    connect(undo_, &QUndoStack::undoTextChanged, undoButton, [undoButton](const QString& text) {
        undoButton->setToolTip(text.isEmpty() ? QString() : tr("Undo %1").arg(text));
    });
    auto* redoButton = new QPushButton(tr("Redo"));
    redoButton->setEnabled(undo_->canRedo());
    connect(redoButton, &QPushButton::clicked, undo_, &QUndoStack::redo);
    connect(undo_, &QUndoStack::canRedoChanged, redoButton, &QWidget::setEnabled);
    connect(undo_, &QUndoStack::redoTextChanged, redoButton, [redoButton](const QString& text) {
        redoButton->setToolTip(text.isEmpty() ? QString() : tr("Redo %1").arg(text));
    });

    auto* peArray = new QPushButton(tr("PE array…"));
    peArray->setToolTip(tr("Resize the PE array: every level sized like it follows"));
    connect(peArray, &QPushButton::clicked, this, [this] {
        bool ok = false;
        const QString text = QInputDialog::getText(
            this, tr("PE array"), tr("Mesh (X × Y), e.g. 16x16:"), QLineEdit::Normal,
            QString("%1x%2").arg(arch_.compute.meshX).arg(arch_.compute.meshY), &ok);
        if (!ok)
            return;
        const QStringList parts = text.toLower().replace(u'×', u'x').split('x');
        bool okX = false, okY = false;
        const int x = parts.size() == 2 ? parts[0].trimmed().toInt(&okX) : 0;
        const int y = parts.size() == 2 ? parts[1].trimmed().toInt(&okY) : 0;
        if (!okX || !okY)
            setError(tr("PE array: '%1' is not a mesh; expected X x Y, e.g. 16x16").arg(text));
        else
            setPeArray(x, y);
    });
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {addButton, removeButton_, upButton_, downButton_, peArray})
        buttons->addWidget(b);
    buttons->addSpacing(12);
    buttons->addWidget(new QLabel(tr("Technology")));
    buttons->addWidget(technology_);
    buttons->addWidget(new QLabel(tr("nm")));
    buttons->addStretch();
    buttons->addWidget(undoButton);
    buttons->addWidget(redoButton);

    auto* splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(view_);
    splitter->addWidget(buildPanel());
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({600, 400}); // the drawing's size hint alone would lose to the form's
    splitter->setChildrenCollapsible(false);

    errorLabel_ = new QLabel;
    errorLabel_->setWordWrap(true);
    errorLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    errorLabel_->setStyleSheet(QStringLiteral("color: #b3261e;"));
    errorLabel_->hide();
    statusLabel_ = new QLabel;
    statusLabel_->setWordWrap(true);
    statusLabel_->setStyleSheet(QStringLiteral("color: #4a5563;"));

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buttons);
    layout->addWidget(splitter, 1);
    layout->addWidget(errorLabel_);
    layout->addWidget(statusLabel_);

    refreshAll();
}

ArchitectureEditor::~ArchitectureEditor() {
    // ~QWidget takes the focus from a panel field; its editingFinished must not
    // reach this half-destroyed editor.
    for (auto* rows : {&storageRows_, &computeRows_})
        for (const Row& row : std::as_const(*rows))
            if (row.edit)
                row.edit->disconnect(this);
    technology_->disconnect(this);
}

void ArchitectureEditor::setArchitecture(const Architecture& a) {
    arch_ = a;
    // Widths left to the word (0) are shown as the widths they are.
    arch_.compute.multiplierBits = arch_.compute.multiplierWidth();
    arch_.compute.adderBits = arch_.compute.adderWidth();
    selected_ = -1;
    clearError();
    // A session's file was validated when read; say so anyway if it is not valid.
    try {
        validateArchitecture(arch_);
    } catch (const InputError& e) {
        setError(QString::fromUtf8(e.what()));
    }
    reestimate();
    refreshAll();
}

bool ArchitectureEditor::applyEdit(const Architecture& next, const QString& description) {
    return commit(next, description, selected_, QString());
}

void ArchitectureEditor::selectLevel(int index) {
    selected_ = (index >= 0 && index <= arch_.numLevels()) ? index : -1;
    updateHighlight();
    refreshPanel();
    refreshButtons();
}

bool ArchitectureEditor::setLevelField(const QString& field, const QString& text) {
    if (selected_ < 0) {
        setError(tr("%1: no level is selected").arg(field));
        return false;
    }
    Architecture next = arch_;
    const bool compute = selected_ == next.numLevels();
    const QString level = levelName(selected_);
    const QString context = QStringLiteral("%1: %2").arg(level, field);
    std::optional<FieldRef> ref;
    ValueSource* source = nullptr;
    QStringList choices;
    if (compute) {
        if (const auto* f = computeField(field)) {
            ref = f->ref(next.compute);
            source = f->source ? f->source(next.compute) : nullptr;
            choices = f->choices ? f->choices() : QStringList();
        }
    } else if (const auto* f = storageField(field)) {
        ref = f->ref(next.levels[selected_]);
        source = f->source ? f->source(next.levels[selected_]) : nullptr;
        choices = f->choices ? f->choices() : QStringList();
    }
    if (!ref) {
        setError(tr("%1: a %2 level has no field '%3'")
                     .arg(level, compute ? tr("compute") : tr("storage"), field));
        return false;
    }
    QString problem;
    bool changed = false;
    if (!choices.isEmpty() && std::holds_alternative<std::string*>(*ref)) {
        // A name from a list (the circuit, the DRAM type): one of the list.
        const QString t = text.trimmed();
        const auto it = std::find_if(choices.begin(), choices.end(), [&](const QString& c) {
            return c.compare(t, Qt::CaseInsensitive) == 0;
        });
        if (it == choices.end()) {
            setError(
                QStringLiteral("%1: '%2' is not one of %3").arg(context, t, choices.join(", ")));
            return false;
        }
        std::string& value = *std::get<std::string*>(*ref);
        const std::string chosen = *it == componentLabel("") ? std::string() : it->toStdString();
        changed = chosen != value;
        value = chosen;
    } else {
        changed = parseField(*ref, text, problem);
    }
    if (!problem.isEmpty()) {
        setError(QStringLiteral("%1: %2").arg(context, problem));
        return false;
    }
    if (!changed)
        return true;
    if (source)
        *source = ValueSource::Typed; // a value typed in stays until unpinned
    return commit(next, tr("Set %1 %2 to %3").arg(level, field, text.trimmed()), selected_,
                  context);
}

bool ArchitectureEditor::unpin(const QString& field) {
    if (selected_ < 0) {
        setError(tr("Unpin %1: no level is selected").arg(field));
        return false;
    }
    Architecture next = arch_;
    const bool compute = selected_ == next.numLevels();
    ValueSource* source = nullptr;
    if (compute) {
        if (const auto* f = computeField(field); f && f->source)
            source = f->source(next.compute);
    } else if (const auto* f = storageField(field); f && f->source) {
        source = f->source(next.levels[selected_]);
    }
    if (!source) {
        setError(
            tr("Unpin %1: it is not an estimated quantity (energies and areas are)").arg(field));
        return false;
    }
    if (*source == ValueSource::Estimated)
        return true;
    *source = ValueSource::Estimated;
    const QString level = levelName(selected_);
    return commit(next, tr("Unpin %1 %2").arg(level, field), selected_,
                  QStringLiteral("%1: %2").arg(level, field));
}

bool ArchitectureEditor::unpinAll() {
    if (selected_ < 0)
        return false;
    Architecture next = arch_;
    if (selected_ == next.numLevels()) {
        ComputeLevel& c = next.compute;
        c.energySource = c.leakSource = c.areaSource = ValueSource::Estimated;
    } else {
        next.levels[selected_].sources = StorageSources{};
    }
    const QString level = levelName(selected_);
    return commit(next, tr("Unpin every estimate of %1").arg(level), selected_, level);
}

bool ArchitectureEditor::setTechnology(const QString& nm) {
    bool ok = false;
    const double v = nm.trimmed().remove(QStringLiteral("nm")).trimmed().toDouble(&ok);
    if (!ok || !std::isfinite(v)) {
        setError(tr("Technology: '%1' is not a process node; expected a number of nm, e.g. 45")
                     .arg(nm.trimmed()));
        return false;
    }
    if (v == arch_.technologyNm)
        return true;
    Architecture next = arch_;
    next.technologyNm = v;
    return commit(next, tr("Technology %1 nm").arg(number(v)), selected_, tr("Technology"));
}

void ArchitectureEditor::setMappingSummary(const QString& text) {
    mappingSummary_ = text;
    refreshStatus();
}

bool ArchitectureEditor::addLevel(int before) {
    const int n = arch_.numLevels();
    if (before < 0 || before > n) {
        setError(tr("Add level: position %1 is outside 0..%2")
                     .arg(QString::number(before), QString::number(n)));
        return false;
    }
    StorageLevel level;
    level.name = unusedName(arch_, "buffer");
    level.cls = LevelClass::SRAM;
    level.capacityWords = kNewLevelWords;
    level.wordBits = arch_.compute.wordBits;
    // The parent's mesh divides its old child's, so taking it keeps every mesh dividing.
    if (before > 0) {
        level.meshX = arch_.levels[before - 1].meshX;
        level.meshY = arch_.levels[before - 1].meshY;
    }
    Architecture next = arch_; // the commit prices the new level
    next.levels.insert(next.levels.begin() + before, level);
    const QString name = QString::fromStdString(level.name);
    return commit(next, tr("Add level %1").arg(name), before, tr("Add level %1").arg(name));
}

bool ArchitectureEditor::removeLevel(int index) {
    const int n = arch_.numLevels();
    if (index == n) {
        setError(tr("Remove level: the compute level '%1' cannot be removed; every architecture "
                    "needs one")
                     .arg(levelName(index)));
        return false;
    }
    if (index < 0 || index > n) {
        setError(tr("Remove level: there is no level %1").arg(index));
        return false;
    }
    const QString name = levelName(index);
    Architecture next = arch_;
    next.levels.erase(next.levels.begin() + index);
    // The level that moves into its place (or the compute level) stays selected.
    return commit(next, tr("Remove level %1").arg(name), index, tr("Remove %1").arg(name));
}

bool ArchitectureEditor::moveLevel(int index, int delta) {
    const int n = arch_.numLevels();
    if (index < 0 || index >= n) {
        setError(index == n ? tr("Move level: the compute level is always innermost")
                            : tr("Move level: there is no storage level %1").arg(index));
        return false;
    }
    const QString name = levelName(index);
    const int target = index + delta;
    if (target < 0 || target >= n) {
        setError(tr("Move %1: it is already the %2 storage level")
                     .arg(name, delta < 0 ? tr("outermost") : tr("innermost")));
        return false;
    }
    if (delta == 0)
        return true;
    Architecture next = arch_;
    StorageLevel moved = std::move(next.levels[index]);
    next.levels.erase(next.levels.begin() + index);
    next.levels.insert(next.levels.begin() + target, std::move(moved));
    const QString description =
        delta < 0 ? tr("Move %1 up").arg(name) : tr("Move %1 down").arg(name);
    return commit(next, description, target, description);
}

bool ArchitectureEditor::setPeArray(int meshX, int meshY) {
    if (meshX < 1 || meshY < 1) {
        setError(tr("PE array: %1 × %2 is not a mesh; both sides must be at least 1")
                     .arg(meshX)
                     .arg(meshY));
        return false;
    }
    Architecture next = arch_;
    resizePeArray(next, meshX, meshY);
    const QString description = tr("PE array %1 × %2").arg(meshX).arg(meshY);
    return commit(next, description, selected_, description);
}

void ArchitectureEditor::clearError() {
    lastError_.clear();
    errorLabel_->clear();
    errorLabel_->hide();
}

QString ArchitectureEditor::levelName(int index) const {
    if (index >= 0 && index < arch_.numLevels())
        return QString::fromStdString(arch_.levels[index].name);
    if (index == arch_.numLevels())
        return QString::fromStdString(arch_.compute.name);
    return tr("level %1").arg(index);
}

void ArchitectureEditor::refreshButtons() {
    const int n = arch_.numLevels();
    const bool storage = selected_ >= 0 && selected_ < n;
    removeButton_->setEnabled(storage);
    upButton_->setEnabled(storage && selected_ > 0);
    downButton_->setEnabled(storage && selected_ + 1 < n);
}

void ArchitectureEditor::apply(const Architecture& a, int selection) {
    arch_ = a;
    selected_ = (selection >= 0 && selection <= arch_.numLevels()) ? selection : -1;
    clearError();
    reestimate();
    refreshAll();
    Q_EMIT architectureChanged(arch_);
}

void ArchitectureEditor::reestimate() {
    estimate_.reset();
    estimateError_.clear();
    try {
        estimate_ = estimateArchitecture(arch_);
    } catch (const InputError& e) {
        estimateError_ = QString::fromUtf8(e.what());
    }
}

bool ArchitectureEditor::commit(Architecture next, const QString& description, int selectAfter,
                                const QString& context) {
    try {
        validateArchitecture(next);
        applyEstimates(next); // estimated values follow the edit; pinned ones stay
    } catch (const InputError& e) {
        const QString message = QString::fromUtf8(e.what());
        setError(context.isEmpty() ? message : QStringLiteral("%1: %2").arg(context, message));
        return false;
    }
    undo_->push(new EditCommand(this, arch_, next, selected_, selectAfter, description));
    return true;
}

void ArchitectureEditor::commitFromPanel(const QString& field, bool computePage) {
    // A page being hidden reports its field's focus loss after the selection has
    // moved on; it no longer shows the selected level.
    if (selected_ < 0 || computePage != (selected_ == arch_.numLevels()))
        return;
    const Row& row = (computePage ? computeRows_ : storageRows_)[field];
    // A field left as shown commits nothing (estimates are shown rounded).
    if (row.edit && !row.edit->isModified())
        return;
    const QString text = row.combo ? row.combo->currentText() : row.edit->text();
    setLevelField(field, text); // a refusal restores the panel's text (setError)
}

void ArchitectureEditor::setError(const QString& message) {
    lastError_ = message;
    errorLabel_->setText(message);
    errorLabel_->show();
    refreshPanel();
}

QWidget* ArchitectureEditor::buildPanel() {
    auto* panel = new QWidget;
    auto* layout = new QVBoxLayout(panel);
    panelTitle_ = new QLabel;
    QFont titleFont = panelTitle_->font();
    titleFont.setBold(true);
    panelTitle_->setFont(titleFont);
    panelTitle_->setWordWrap(true);
    layout->addWidget(panelTitle_);

    pages_ = new QStackedWidget;
    auto* hint = new QLabel(tr("Click a block in the hierarchy to edit its level. Energies and "
                               "areas are estimated for the technology node unless typed in or "
                               "imported from an ERT; pinned values show the estimate beside "
                               "them, and ↺ unpins one."));
    hint->setWordWrap(true);
    hint->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    pages_->addWidget(hint);
    pages_->addWidget(buildFieldPage(false));
    pages_->addWidget(buildFieldPage(true));
    layout->addWidget(pages_);
    layout->addStretch();
    panel->setMinimumWidth(440);
    return panel;
}

QWidget* ArchitectureEditor::buildFieldPage(bool compute) {
    auto* page = new QWidget;
    auto* form = new QFormLayout(page);
    form->setContentsMargins(0, 0, 0, 0);
    form->setVerticalSpacing(4);
    QHash<QString, Row>& rows = compute ? computeRows_ : storageRows_;
    const auto addRow = [&](const auto& f) {
        const QString key = QString::fromLatin1(f.key);
        Row row;
        if (f.choices) {
            row.combo = new QComboBox;
            row.combo->addItems(f.choices());
            // activated, not currentIndexChanged: only the user's choice commits.
            connect(row.combo, &QComboBox::activated, this,
                    [this, key, compute] { commitFromPanel(key, compute); });
            row.widget = row.combo;
        } else {
            row.edit = new QLineEdit;
            // Room for an area in µm² of a large buffer (217,363.36892) in full.
            row.edit->setMinimumWidth(row.edit->fontMetrics().horizontalAdvance("0000000.000000"));
            connect(row.edit, &QLineEdit::editingFinished, this,
                    [this, key, compute] { commitFromPanel(key, compute); });
            row.widget = row.edit;
        }
        row.widget->setToolTip(tr(f.tip));
        QWidget* shown = row.widget;
        if (f.source) {
            // Estimated quantities: the value, where it came from, and unpin.
            shown = new QWidget;
            auto* line = new QHBoxLayout(shown);
            line->setContentsMargins(0, 0, 0, 0);
            row.source = new QLabel;
            row.source->setMinimumWidth(120);
            row.unpin = new QToolButton;
            row.unpin->setText(QStringLiteral("↺"));
            row.unpin->setToolTip(tr("Unpin: follow the estimate again"));
            connect(row.unpin, &QToolButton::clicked, this, [this, key] { unpin(key); });
            line->addWidget(row.widget, 1);
            line->addWidget(row.source);
            line->addWidget(row.unpin);
        }
        rows.insert(key, row);
        form->addRow(tr(f.label), shown);
    };
    if (compute)
        for (std::size_t i = 0; i < kNumComputeFields; ++i)
            addRow(kComputeFields[i]);
    else
        for (std::size_t i = 0; i < kNumStorageFields; ++i)
            addRow(kStorageFields[i]);
    auto* unpinAllButton = new QPushButton(tr("Unpin all estimates"));
    unpinAllButton->setToolTip(tr("Every energy and area of this level follows the estimator"));
    connect(unpinAllButton, &QPushButton::clicked, this, [this] { unpinAll(); });
    form->addRow(QString(), unpinAllButton);
    return page;
}

void ArchitectureEditor::refreshAll() {
    technology_->setText(number(arch_.technologyNm));
    rebuildScene();
    refreshPanel();
    refreshStatus();
    refreshButtons();
}

void ArchitectureEditor::rebuildScene() {
    blocks_ = drawHierarchy(scene_, arch_);
    updateHighlight();
    view_->fit();
}

void ArchitectureEditor::updateHighlight() {
    for (int i = 0; i < static_cast<int>(blocks_.size()); ++i)
        blocks_[i]->setPen(blockPen(arch_, i, i == selected_));
}

void ArchitectureEditor::refreshSource(Row& row, ValueSource source, double inUse, double estimate,
                                       const QString& basis, bool area) {
    QString text = sourceText(source, area);
    if (source != ValueSource::Estimated && estimate_ && differs(inUse, estimate))
        text += QStringLiteral(" · est. %1").arg(QString::number(estimate, 'g', 4));
    row.source->setText(text);
    row.source->setStyleSheet(sourceStyle(source));
    row.source->setToolTip(estimate_ ? tr("Estimate %1 (%2)").arg(number(estimate), basis)
                                     : tr("No estimate: %1").arg(estimateError_));
    row.unpin->setEnabled(source != ValueSource::Estimated);
}

void ArchitectureEditor::refreshPanel() {
    const int n = arch_.numLevels();
    // Texts are set before the page switches so that a field losing focus on the
    // switch finds its own value and commits nothing.
    auto show = [](Row& row, const QString& text) {
        if (row.combo) {
            row.combo->setCurrentIndex(row.combo->findText(text, Qt::MatchFixedString));
        } else {
            row.edit->setText(text);        // (and no longer modified)
            row.edit->setCursorPosition(0); // a long value shows its leading digits
        }
    };
    // Estimates to four digits; values someone gave, as given.
    auto shownValue = [](double v, ValueSource s) {
        return s == ValueSource::Estimated ? QString::number(v, 'g', 4) : number(v);
    };
    if (selected_ == n) {
        ComputeLevel shownLevel = arch_.compute; // the field table reads through pointers
        for (std::size_t i = 0; i < kNumComputeFields; ++i) {
            const auto& f = kComputeFields[i];
            Row& row = computeRows_[QString::fromLatin1(f.key)];
            show(row, f.source
                          ? shownValue(*std::get<double*>(f.ref(shownLevel)), *f.source(shownLevel))
                          : shownField(f.ref(shownLevel)));
            if (!f.source)
                continue;
            const ComputeEstimate e = estimate_ ? estimate_->compute : ComputeEstimate{};
            const QString key = QString::fromLatin1(f.key);
            const double est = key == QLatin1String("mac_energy") ? e.energy
                               : key == QLatin1String("mac_leak") ? e.leak
                                                                  : e.area;
            refreshSource(row, *f.source(shownLevel), *std::get<double*>(f.ref(shownLevel)), est,
                          QString::fromStdString(e.basis), key.endsWith(QLatin1String("area")));
        }
        panelTitle_->setText(tr("%1 — compute level").arg(levelName(n)));
        pages_->setCurrentIndex(2);
    } else if (selected_ >= 0) {
        StorageLevel shownLevel = arch_.levels[selected_];
        const StorageEstimate e =
            estimate_ ? estimate_->levels[std::size_t(selected_)] : StorageEstimate{};
        for (std::size_t i = 0; i < kNumStorageFields; ++i) {
            const auto& f = kStorageFields[i];
            const QString key = QString::fromLatin1(f.key);
            Row& row = storageRows_[key];
            show(row, key == QLatin1String("component") ? componentLabel(shownLevel.component)
                      : f.source
                          ? shownValue(*std::get<double*>(f.ref(shownLevel)), *f.source(shownLevel))
                          : shownField(f.ref(shownLevel)));
            if (!f.source)
                continue;
            const double est = key == QLatin1String("read_energy")     ? e.energy.read
                               : key == QLatin1String("write_energy")  ? e.energy.write
                               : key == QLatin1String("update_energy") ? e.energy.update
                               : key == QLatin1String("leak_energy")   ? e.energy.leak
                                                                       : e.area;
            refreshSource(row, *f.source(shownLevel), *std::get<double*>(f.ref(shownLevel)), est,
                          QString::fromStdString(e.basis), key.endsWith(QLatin1String("area")));
        }
        // DRAM ignores its capacity; only DRAM has a type.
        QLineEdit* capacity = storageRows_[QStringLiteral("capacity")].edit;
        capacity->setEnabled(!shownLevel.unbounded());
        capacity->setPlaceholderText(shownLevel.unbounded() ? tr("unbounded") : QString());
        if (shownLevel.unbounded())
            capacity->clear();
        storageRows_[QStringLiteral("dram_type")].widget->setEnabled(shownLevel.cls ==
                                                                     LevelClass::DRAM);
        panelTitle_->setText(
            tr("%1 — storage level %2 of %3")
                .arg(levelName(selected_), QString::number(selected_ + 1), QString::number(n)));
        pages_->setCurrentIndex(1);
    } else {
        panelTitle_->setText(tr("No level selected"));
        pages_->setCurrentIndex(0);
    }
}

QString ArchitectureEditor::statusText() const {
    return statusLabel_->text();
}

void ArchitectureEditor::refreshStatus() {
    double onChipBits = 0;
    for (const StorageLevel& s : arch_.levels)
        if (s.cls == LevelClass::SRAM || s.cls == LevelClass::RegFile)
            onChipBits += double(s.capacityWords) * s.wordBits * double(s.instances());
    QString text =
        tr("Total MACs: %1   ·   Levels: %2 storage + compute   ·   On-chip capacity: %3")
            .arg(QString::number(arch_.compute.instances()), QString::number(arch_.numLevels()),
                 formatBytes(onChipBits / 8));
    if (estimate_)
        text += tr("   ·   On-chip area: %1 (storage %2, MACs %3) at %4 nm")
                    .arg(formatArea(estimate_->onChipArea), formatArea(estimate_->storageArea),
                         formatArea(estimate_->macArea), number(arch_.technologyNm));
    else if (!estimateError_.isEmpty())
        text += tr("   ·   No estimate: %1").arg(estimateError_);
    if (!mappingSummary_.isEmpty())
        text += QStringLiteral("   ·   ") + mappingSummary_;
    statusLabel_->setText(text);
}

} // namespace mw::ui
