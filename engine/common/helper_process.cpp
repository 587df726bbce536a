#include "common/helper_process.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mw {

namespace {

bool executableFile(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

} // namespace

std::string findHelper(const char* env, const char* name, const char* buildPath) {
    if (const char* value = std::getenv(env); value && *value)
        return executableFile(value) ? value : "";
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec && executableFile(self.parent_path() / name))
        return self.parent_path() / name;
    // Beside the library that holds this code, when it is not the program
    // (the Python module, whose program is python3).
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&findHelper), &info) && info.dli_fname) {
        const std::filesystem::path library =
            std::filesystem::path(info.dli_fname).parent_path() / name;
        if (executableFile(library))
            return library;
    }
    if (buildPath && *buildPath && executableFile(buildPath))
        return buildPath;
    return "";
}

HelperRun runHelper(const std::string& helper, const char* request, std::size_t size,
                    double patienceSeconds, const std::function<bool()>& cancelled) {
    HelperRun run;
    // One socket both ways: the helper reads its request to the end (our
    // shutdown), then writes its reply. Close-on-exec keeps this socket out
    // of helpers other threads spawn meanwhile.
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        run.failure = std::string("could not connect to it: ") + std::strerror(errno);
        return run;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, sv[1], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, sv[1], STDOUT_FILENO);
    // Nothing the helper's libraries print may reach the program's output.
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char* argv[] = {const_cast<char*>(helper.c_str()), nullptr};
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(sv[1]);
    if (spawned != 0) {
        close(sv[0]);
        run.failure = "could not start " + helper + ": " + std::strerror(spawned);
        return run;
    }

    enum class State { Running, Done, Cancelled, Overran, Broken };
    State state = State::Running;
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(patienceSeconds);
    auto check = [&] {
        if (state != State::Running)
            return;
        // The time the caller's check takes (a paused run blocks in it) is
        // not the helper's.
        const auto asked = std::chrono::steady_clock::now();
        const bool stop = cancelled && cancelled();
        deadline += std::chrono::steady_clock::now() - asked;
        if (stop)
            state = State::Cancelled;
        else if (std::chrono::steady_clock::now() > deadline)
            state = State::Overran;
    };
    constexpr int kPollMs = 20;
    const char* p = request;
    std::size_t left = size;
    while (left > 0 && state == State::Running) {
        pollfd pfd{sv[0], POLLOUT, 0};
        const int ready = poll(&pfd, 1, kPollMs);
        if (ready > 0) {
            const ssize_t n = send(sv[0], p, left, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                p += n;
                left -= static_cast<std::size_t>(n);
            } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                state = State::Broken; // the helper is gone; its status says why
            }
        } else if (ready < 0 && errno != EINTR) {
            state = State::Broken;
        }
        check();
    }
    shutdown(sv[0], SHUT_WR);
    while (state == State::Running) {
        pollfd pfd{sv[0], POLLIN, 0};
        const int ready = poll(&pfd, 1, kPollMs);
        if (ready > 0) {
            char buffer[1 << 16];
            const ssize_t n = read(sv[0], buffer, sizeof buffer);
            if (n == 0)
                state = State::Done;
            else if (n > 0)
                run.reply.insert(run.reply.end(), buffer, buffer + n);
            else if (errno != EINTR && errno != EAGAIN)
                state = State::Broken;
        } else if (ready < 0 && errno != EINTR) {
            state = State::Broken;
        }
        check();
    }
    if (state == State::Cancelled || state == State::Overran)
        kill(pid, SIGKILL);
    close(sv[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (state == State::Cancelled || state == State::Overran) {
        run.outcome =
            state == State::Cancelled ? HelperRun::Outcome::Cancelled : HelperRun::Outcome::Overran;
        run.reply.clear();
        return run;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        run.failure = WIFSIGNALED(status)
                          ? "crashed (signal " + std::to_string(WTERMSIG(status)) + ")"
                          : "exited with status " + std::to_string(WEXITSTATUS(status));
        run.reply.clear();
        return run;
    }
    run.outcome = HelperRun::Outcome::Replied;
    return run;
}

bool readRequest(int in, std::vector<char>& bytes) {
    // Die with the program that asked: work nobody reads is wasted.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char buffer[1 << 16];
    for (;;) {
        const ssize_t n = read(in, buffer, sizeof buffer);
        if (n == 0)
            return true;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        bytes.insert(bytes.end(), buffer, buffer + n);
    }
}

bool writeReply(int out, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = write(out, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace mw
