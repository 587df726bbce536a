// The search panel's results table: a row per finished run of the session
// and per running search, in the order they started; a running search's row
// refreshed live (its bar while it prepares), and the context menu of each.
#include "ui/search_panel.h"

#include "common/error.h"

#include <QHeaderView>
#include <QMenu>
#include <QProgressBar>
#include <QTableWidget>

#include <algorithm>
#include <cmath>

namespace mw::ui {

double SearchPanel::optimum(const std::string& layer, const std::string& objective) const {
    double best = 0.0;
    for (const mw::SessionRun& r : runs_) {
        if (!r.finished || r.layer != layer || r.settings.objective.name() != objective ||
            !r.stale.empty() || searchedAnotherDesign(r))
            continue; // (a proof holds for the design it was made on)
        const double o = mw::provenOptimum(r.result);
        if (o > 0 && (best == 0 || o < best))
            best = o;
    }
    return best;
}

namespace {

// "training epoch 3/20 · 45 % · 12 s left", as a run's row shows its phase.
QString phaseText(const SearchJob::Mail::Progress& p, bool paused) {
    QString text = p.phase;
    if (p.phaseFraction >= 0)
        text += QString(" · %1 %").arg(int(std::floor(100 * p.phaseFraction)));
    if (paused)
        text += " · paused";
    else if (p.phaseSecondsLeft >= 0)
        text += QString(" · %1 s left").arg(std::llround(p.phaseSecondsLeft));
    return text;
}

} // namespace

void SearchPanel::refreshTable() {
    table_->setRowCount(0);
    // Finished and running runs in the order they started: a row does not
    // move when another run finishes.
    std::vector<std::pair<std::int64_t, int>> order; // key, run index (>= 0) or -id
    for (std::size_t i = 0; i < runs_.size(); ++i)
        if (runs_[i].finished)
            order.push_back({i < rowKeys_.size() ? rowKeys_[i] : std::int64_t(i), int(i)});
    for (const auto& [id, live] : live_)
        order.push_back({kLiveKeys + id, -id});
    std::stable_sort(order.begin(), order.end());
    int row = 0;
    for (const auto& [key, entry] : order) {
        if (entry < 0) {
            addLiveRow(row++, -entry);
            continue;
        }
        const std::size_t i = std::size_t(entry);
        const mw::SessionRun& r = runs_[i];
        const mw::SearchResult& res = r.result;
        double bound = 0.0;
        try {
            const int li = network_.layerIndex(r.layer);
            if (li >= 0)
                bound = mw::lowerBound(mw::buildProblem(network_.layers[std::size_t(li)]), arch_,
                                       r.settings.objective)
                            .edp;
        } catch (const mw::InputError&) {
            bound = 0.0;
        }
        // Distance above a proven optimum; an unproven optimal run shows its
        // own proven gap.
        QString overOptimum;
        const double opt = optimum(r.layer, r.settings.objective.name());
        const bool current = r.stale.empty(); // a stale run's bound and optimum were another's
        const bool searchedHere = !searchedAnotherDesign(r); // its figures are of this design
        // (A density objective's figure, a sum over densities, is not re-costed.)
        const bool recostable = r.settings.objective.densities.empty();
        if (current && res.found && opt > 0 && (searchedHere || recostable))
            overOptimum = QString::number(100.0 * (costNow(r) / opt - 1.0), 'f', 1) + " %";
        else if (current && searchedHere && res.found && r.searcher == "optimal" &&
                 res.stats.count("gap"))
            overOptimum = "≤ " + QString::number(100.0 * res.stats.at("gap"), 'g', 3) + " %";
        table_->insertRow(row);
        const QStringList cells = {
            QString::fromStdString(r.searcher),
            QString::fromStdString(r.layer),
            QString::number(r.settings.seed),
            QString::fromStdString(r.settings.objective.name()),
            res.found ? formatCost(current ? costNow(r) : res.bestCost) : QString("none found"),
            res.found ? QString::number(res.bestEvaluation.energy * 1e-6, 'f', 2) : QString(),
            res.found ? QString::number(res.bestEvaluation.cycles) : QString(),
            current && res.found && bound > 0
                ? QString::number(res.bestEvaluation.edp / bound, 'f', 2)
                : QString(),
            overOptimum,
            QString::number(res.evaluations),
            QString::number(res.seconds, 'f', 2),
            !r.stale.empty()
                ? QString("stale: %1").arg(QString::fromStdString(r.stale))
                : (res.cancelled ? QString("cancelled") : QString::fromStdString(res.stopReason)) +
                      (searchedHere ? QString() : QString(" (design since edited)")),
            searcherFigures(res, ", ", false)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c == ColStatus) {
                QString tip = cells[c];
                for (const std::string& line : res.notes) // what the run wants known
                    tip += "\n" + QString::fromStdString(line);
                if (const QString model = modelFigures(res, "\n"); !model.isEmpty())
                    tip += "\n" + model;
                item->setToolTip(tip);
            }
            if (c == ColFigures)
                item->setToolTip(searcherFigures(res, "\n", true));
            if (c == ColFinal && current && !searchedHere)
                item->setToolTip(
                    recostable ? QString("Re-costed on the design as edited; its search found %1 "
                                         "on the design it ran on (its curve)")
                                     .arg(formatCost(res.bestCost))
                               : QString("Found on the design before the edit: a density "
                                         "objective is not re-costed; run it again for this "
                                         "design's"));
            if (c == ColSearcher) {
                item->setData(Qt::UserRole, int(i));
                item->setForeground(searcherColor(r.searcher));
            }
            if (c >= ColSeed && c <= ColSeconds)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (!r.stale.empty()) { // greyed: figures as computed on another design
                item->setForeground(palette().brush(QPalette::Disabled, QPalette::Text));
                item->setToolTip(QString("Stale, %1; its figures are as they were computed. "
                                         "Right-click to run it again on the current design.")
                                     .arg(QString::fromStdString(r.stale)));
            }
            table_->setItem(row, c, item);
        }
        ++row;
    }
    // The figures column only when a run has figures (CoSA's solve, a
    // surrogate's steps): empty, it took the width the status needs.
    bool anyFigures = false;
    for (int r = 0; r < table_->rowCount(); ++r)
        anyFigures = anyFigures || !table_->item(r, ColFigures)->text().isEmpty();
    sizingFigures_ = true;
    table_->setColumnHidden(ColFigures, !anyFigures);
    sizingFigures_ = false;
    sizeFiguresColumn();
    refreshLiveRows();
}

void SearchPanel::sizeFiguresColumn() {
    // The width the other columns leave, less room for a stop reason, at
    // most, elided (the tooltip has them all): the optimal searcher's figures
    // alone pushed the status off the side. Not while hidden (the viewport's
    // width is not the one shown: showEvent sizes it), and never over a
    // width the user dragged.
    if (table_->isColumnHidden(ColFigures) || figuresWidthByUser_ || !table_->isVisible())
        return;
    constexpr int kStatusRoom = 180, kLeast = 100;
    sizingFigures_ = true;
    int others = 0;
    for (int c = 0; c < ColumnCount; ++c)
        if (c != ColStatus && !table_->isColumnHidden(c)) {
            table_->resizeColumnToContents(c); // (the widths laid out later are not yet known)
            others += c == ColFigures ? 0 : table_->columnWidth(c);
        }
    const int wanted = table_->columnWidth(ColFigures);
    const int room = table_->viewport()->width() - others - kStatusRoom;
    table_->setColumnWidth(ColFigures, std::min(wanted, std::max(kLeast, room)));
    sizingFigures_ = false;
}

void SearchPanel::addLiveRow(int row, int id) {
    // A running search: its id as a negative marker, cells refreshed live.
    const Live& live = live_.at(id);
    table_->insertRow(row);
    for (int c = 0; c < table_->columnCount(); ++c) {
        auto* item = new QTableWidgetItem;
        if (c >= ColSeed && c <= ColSeconds)
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table_->setItem(row, c, item);
    }
    table_->item(row, ColSearcher)->setData(Qt::UserRole, -id);
    table_->item(row, ColSearcher)->setText(QString::fromStdString(live.request.searcher));
    table_->item(row, ColSearcher)->setForeground(searcherColor(live.request.searcher));
    table_->item(row, ColLayer)->setText(QString::fromStdString(live.request.layer));
    table_->item(row, ColSeed)->setText(QString::number(live.request.settings.seed));
    table_->item(row, ColObjective)
        ->setText(QString::fromStdString(live.request.settings.objective.name()));
}

void SearchPanel::refreshLiveRows() {
    for (int row = 0; row < table_->rowCount(); ++row) {
        const QTableWidgetItem* marker = table_->item(row, ColSearcher);
        const int id = marker ? -marker->data(Qt::UserRole).toInt() : 0;
        const auto it = id > 0 ? live_.find(id) : live_.end();
        if (it == live_.end())
            continue;
        const Live& live = it->second;
        const Curve& c = live.curve;
        // The latest report, also while no mapping is found yet (training).
        const SearchJob::Mail::Progress& p = live.latest;
        table_->item(row, ColEvaluations)->setText(QString::number(p.evaluations));
        table_->item(row, ColSeconds)
            ->setText(p.seconds > 0 ? QString::number(p.seconds, 'f', 2) : QString());
        // A step that is not search shows as a bar over the cells its search
        // fills later (best, energy, cycles, distances): what it is, how far,
        // how long yet.
        auto* bar = qobject_cast<QProgressBar*>(table_->cellWidget(row, ColFinal));
        const QString state = live.job->paused()  ? QString("paused (right-click)")
                              : p.phase.isEmpty() ? QString("running (right-click)")
                                                  : QString("preparing (right-click)");
        table_->item(row, ColStatus)->setText(state);
        if (p.phase.isEmpty()) {
            if (bar) {
                table_->removeCellWidget(row, ColFinal);
                table_->setSpan(row, ColFinal, 1, 1);
            }
            table_->item(row, ColFinal)
                ->setText(c.best.isEmpty() ? QString() : formatCost(c.best.back()));
            continue;
        }
        if (!bar) {
            bar = new QProgressBar;
            bar->setTextVisible(true);
            table_->setSpan(row, ColFinal, 1, ColOverOptimum - ColFinal + 1);
            table_->setCellWidget(row, ColFinal, bar);
        }
        const QString text = phaseText(p, live.job->paused());
        table_->item(row, ColStatus)->setToolTip(text);
        bar->setToolTip(text);
        if (p.phaseFraction < 0) {
            bar->setRange(0, 0); // busy: the step cannot tell how far it is
        } else {
            bar->setRange(0, 1000);
            bar->setValue(int(std::lround(1000 * p.phaseFraction)));
        }
        bar->setFormat(text);
    }
}

void SearchPanel::showTableMenu(const QPoint& pos) {
    QTableWidgetItem* item = table_->itemAt(pos);
    if (!item)
        return;
    const int marker = table_->item(item->row(), 0)->data(Qt::UserRole).toInt();
    QMenu menu(this);
    if (marker < 0) {
        const int id = -marker;
        const auto it = live_.find(id);
        if (it == live_.end())
            return;
        const bool paused = it->second.job->paused();
        menu.addAction(paused ? "Resume" : "Pause", this,
                       [this, id, paused] { setRunPaused(id, !paused); });
        menu.addAction("Cancel (keep its best)", this, [this, id] { cancelRun(id); });
    } else {
        // By its key, not its index: a run finishing while the menu is open
        // is inserted where it started, which may be before this one.
        const std::int64_t key =
            std::size_t(marker) < rowKeys_.size() ? rowKeys_[std::size_t(marker)] : -1;
        const auto indexNow = [this, key] {
            const auto it = std::find(rowKeys_.begin(), rowKeys_.end(), key);
            return key < 0 || it == rowKeys_.end() ? -1 : int(it - rowKeys_.begin());
        };
        menu.addAction("Show in inspector", this, [this, indexNow] {
            if (const int i = indexNow(); i >= 0)
                emit runActivated(i);
        });
        menu.addAction(runs_.at(std::size_t(marker)).stale.empty()
                           ? "Run again"
                           : "Run again on the current design",
                       this, [this, indexNow] {
                           if (const int i = indexNow(); i >= 0)
                               rerun(i);
                       });
    }
    menu.exec(table_->viewport()->mapToGlobal(pos));
}

} // namespace mw::ui
