#pragma once
// Every file the program writes goes through here: the bytes go to a new file
// beside the target, are flushed to disk, and then replace the target in one
// rename. A crash, a kill or a full disk leaves the old file (or none) where
// the new one was going, never half of one.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mw {

// Throws InputError naming `path` and the reason; the target is then as it was.
void writeFileAtomically(const std::string& path, std::string_view bytes);

// The file a writer beside `path` may fill and then rename over it: unique to
// this process and call, in the same folder.
std::string temporarySibling(const std::string& path);
// Renames `temporary` over `path` (then syncs the folder), or removes it and
// throws InputError naming `path`.
void replaceWith(const std::string& temporary, const std::string& path);

// Files that belong together (a search's result, trace and best mapping):
// each is written beside its target as writeFileAtomically writes it, and
// only when all are written do they replace their targets, a rename each,
// and the files named stale go. A failure to write (a full disk, a missing
// folder) leaves every target as it was, never a new result beside an old
// mapping; what was staged is removed. (A rename that fails part way, which
// a folder's own files do not, is named; the files renamed before it stay.)
class FileSet {
  public:
    FileSet() = default;
    FileSet(const FileSet&) = delete;
    FileSet& operator=(const FileSet&) = delete;
    ~FileSet(); // removes what was staged and not committed

    // Writes bytes for `path` (InputError naming path on failure).
    void stage(const std::string& path, std::string_view bytes);
    // A file of an earlier set that this one does not have (a best mapping,
    // when this run found none): removed on commit, if present.
    void removeOnCommit(const std::string& path);
    // A file this set does not have that a person may have written (a
    // mapping.yaml in the folder a case is exported to): renamed to `aside`
    // on commit, if present (aside.1, aside.2, ... when that is taken), so
    // that it is neither read with the new set nor lost.
    void setAsideOnCommit(const std::string& path, const std::string& aside);
    // What commit() set aside: (path, aside) of each file that was there.
    const std::vector<std::pair<std::string, std::string>>& setAside() const { return setAside_; }
    // Renames every staged file over its target and removes the stale ones.
    void commit();

  private:
    std::vector<std::pair<std::string, std::string>> staged_; // temporary, target
    std::vector<std::string> stale_;
    std::vector<std::pair<std::string, std::string>> asides_, setAside_;
};

} // namespace mw
