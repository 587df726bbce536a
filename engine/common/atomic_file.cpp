#include "common/atomic_file.h"

#include "common/error.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace mw {

namespace {

std::string folderOf(const std::string& path) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

// After a rename, the folder's entry must reach the disk too.
void syncFolder(const std::string& path) {
    const int fd = ::open(folderOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

} // namespace

std::string temporarySibling(const std::string& path) {
    static std::atomic<unsigned> counter{0};
    const std::filesystem::path p(path);
    return (p.parent_path() / ("." + p.filename().string() + ".tmp-" + std::to_string(::getpid()) +
                               "-" + std::to_string(counter.fetch_add(1))))
        .string();
}

void replaceWith(const std::string& temporary, const std::string& path) {
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(temporary.c_str());
        throw InputError(path, "could not be replaced (" + why + "); the previous file is kept");
    }
    syncFolder(path);
}

namespace {

// The bytes in a new file beside path, flushed to disk: its name.
std::string writeTemporary(const std::string& path, std::string_view bytes) {
    const std::string temporary = temporarySibling(path);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        throw InputError(path, std::string("cannot be opened for writing (") +
                                   std::strerror(errno) + ")");
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    int error = 0;
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            error = n < 0 ? errno : ENOSPC;
            break;
        }
        p += n;
        left -= std::size_t(n);
    }
    if (error == 0 && ::fsync(fd) != 0)
        error = errno;
    if (::close(fd) != 0 && error == 0)
        error = errno;
    if (error != 0) {
        ::unlink(temporary.c_str());
        throw InputError(path, std::string("could not be written (") + std::strerror(error) +
                                   "); the previous file is kept");
    }
    return temporary;
}

} // namespace

void writeFileAtomically(const std::string& path, std::string_view bytes) {
    replaceWith(writeTemporary(path, bytes), path);
}

FileSet::~FileSet() {
    for (const auto& [temporary, target] : staged_)
        ::unlink(temporary.c_str());
}

void FileSet::stage(const std::string& path, std::string_view bytes) {
    staged_.emplace_back(writeTemporary(path, bytes), path);
}

void FileSet::removeOnCommit(const std::string& path) {
    stale_.push_back(path);
}

void FileSet::setAsideOnCommit(const std::string& path, const std::string& aside) {
    asides_.emplace_back(path, aside);
}

void FileSet::commit() {
    // Renames within a folder do not fail for want of space; one that fails
    // (the target became a folder) is named, and the rest stay staged.
    while (!staged_.empty()) {
        const auto [temporary, target] = staged_.front();
        staged_.erase(staged_.begin());
        replaceWith(temporary, target);
    }
    // A file to set aside goes to the first of aside, aside.1, aside.2, ...
    // that is free: one set aside before is not written over.
    std::vector<std::pair<std::string, std::string>> asides = std::move(asides_);
    asides_.clear();
    for (const auto& [path, aside] : asides) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
            continue;
        auto taken = [&ec](const std::string& name) {
            return std::filesystem::symlink_status(name, ec).type() !=
                   std::filesystem::file_type::not_found;
        };
        std::string free = aside;
        for (int k = 1; taken(free); ++k) {
            if (k > 1000)
                throw InputError(path, "could not be set aside: '" + aside + "' and '" + aside +
                                           ".1' to '.1000' are all taken");
            free = aside + "." + std::to_string(k);
        }
        std::filesystem::rename(path, free, ec);
        if (ec)
            throw InputError(path, "is left from an earlier set and could not be set aside as '" +
                                       free + "' (" + ec.message() + ")");
        syncFolder(path);
        setAside_.emplace_back(path, free);
    }
    // A stale file that is not there is gone already; one that cannot go (a
    // folder, a permission) is named, as it would be read with the new set.
    std::vector<std::string> stale = std::move(stale_);
    stale_.clear();
    for (const std::string& path : stale) {
        std::error_code ec;
        if (std::filesystem::remove(path, ec))
            syncFolder(path);
        else if (ec)
            throw InputError(path, "is left from an earlier set and could not be removed (" +
                                       ec.message() + ")");
    }
}

} // namespace mw
