#pragma once
// The fields of a storage level and of the compute level, as the architecture
// editor's panel shows them and setLevelField sets them: one table per level
// kind, each field with its key, label, tooltip, where it lives in the level
// and, for the quantities the estimator prices, where their value came from.
#include "arch/architecture.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace mw::ui {

using FieldRef = std::variant<std::string*, LevelClass*, Arithmetic*, int*, std::int64_t*, double*>;

template <class Level> struct Field {
    const char* key;
    const char* label;
    const char* tip;
    FieldRef (*ref)(Level&);
    // Estimated quantities: the source of the value (estimated, imported, typed).
    ValueSource* (*source)(Level&) = nullptr;
    // Fields chosen from a list (a combo box in the panel); null: typed in.
    QStringList (*choices)() = nullptr;
};

extern const Field<StorageLevel> kStorageFields[];
extern const std::size_t kNumStorageFields;
extern const Field<ComputeLevel> kComputeFields[];
extern const std::size_t kNumComputeFields;

// The field `key` of a level, or null.
const Field<StorageLevel>* storageField(const QString& key);
const Field<ComputeLevel>* computeField(const QString& key);

// A field's value as the panel shows it (the shortest text that reads back
// as the same number, so an untouched field never turns into an edit).
QString shownField(const FieldRef& ref);
QString number(double v);

// Reads `text` into the field; returns whether the value changed. Bad text
// sets `problem` (what was expected) and changes nothing.
bool parseField(const FieldRef& ref, const QString& text, QString& problem);

// The estimator's components as the panel lists them, "by class" first.
QString componentLabel(const std::string& component);

} // namespace mw::ui
