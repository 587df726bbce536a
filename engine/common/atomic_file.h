#pragma once
// Every file the program writes goes through here: the bytes go to a new file
// beside the target, are flushed to disk, and then replace the target in one
// rename. A crash, a kill or a full disk leaves the old file (or none) where
// the new one was going, never half of one.
#include <string>
#include <string_view>

namespace mw {

// Throws InputError naming `path` and the reason; the target is then as it was.
void writeFileAtomically(const std::string& path, std::string_view bytes);

// The file a writer beside `path` may fill and then rename over it: unique to
// this process and call, in the same folder.
std::string temporarySibling(const std::string& path);
// Renames `temporary` over `path` (then syncs the folder), or removes it and
// throws InputError naming `path`.
void replaceWith(const std::string& temporary, const std::string& path);

} // namespace mw
