#include "kiln/scheduler/ChildProcess.h"

#include "kiln/graph/Error.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kiln::scheduler {

namespace {

/// How much of a child's stderr is kept for messages.
constexpr std::size_t kKeptErrorBytes = 4096;

void closeFd(int& fd) {
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

} // namespace

ChildProcess::ChildProcess(std::vector<std::string> const& argv) {
    if (argv.empty())
        fail("no program to start");
    int in[2], out[2], err[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
        fail("cannot make pipes for '{}': {}", argv[0], std::strerror(errno));
    // Build argv before fork: the child may only call async-signal-safe functions.
    std::vector<char*> args;
    for (auto const& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    // A pipe whose reader exited must not kill the sweep.
    std::signal(SIGPIPE, SIG_IGN);
    pid_ = ::fork();
    if (pid_ < 0)
        fail("cannot start '{}': {}", argv[0], std::strerror(errno));
    if (pid_ == 0) {
        ::setpgid(0, 0);
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        ::signal(SIGPIPE, SIG_DFL);
        ::execvp(args[0], args.data());
        char const message[] = "kiln: cannot execute the worker program\n";
        [[maybe_unused]] auto n = ::write(2, message, sizeof message - 1);
        ::_exit(127);
    }
    ::setpgid(pid_, pid_); // also here, so the group exists before kill() can be called
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
    ::fcntl(err_, F_SETFL, O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
    if (!reaped_) {
        kill();
        wait();
    }
    closeFd(in_);
    closeFd(out_);
    closeFd(err_);
}

bool ChildProcess::writeLine(std::string const& line) {
    if (in_ < 0)
        return false;
    std::string const text = line + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t const n = ::write(in_, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

void ChildProcess::closeInput() {
    closeFd(in_);
}

void ChildProcess::drainError(bool block) {
    if (err_ < 0)
        return;
    char chunk[4096];
    while (true) {
        if (block) {
            pollfd p{err_, POLLIN, 0};
            if (::poll(&p, 1, 200) <= 0)
                return;
        }
        ssize_t const n = ::read(err_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                closeFd(err_);
            return;
        }
        stderr_.append(chunk, static_cast<std::size_t>(n));
        if (stderr_.size() > kKeptErrorBytes)
            stderr_.erase(0, stderr_.size() - kKeptErrorBytes);
    }
}

ReadStatus ChildProcess::readLine(std::string& line, std::chrono::duration<double> timeout) {
    auto const deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
            line = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            return ReadStatus::Line;
        }
        if (out_ < 0)
            return ReadStatus::Closed;
        auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return ReadStatus::Timeout;
        pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
        int const n = ::poll(fds, err_ >= 0 ? 2 : 1, static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            fail("cannot wait for the worker: {}", std::strerror(errno));
        if (err_ >= 0 && fds[1].revents)
            drainError(false);
        if (fds[0].revents) {
            char chunk[65536];
            ssize_t const r = ::read(out_, chunk, sizeof chunk);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                closeFd(out_);
                continue;
            }
            buffer_.append(chunk, static_cast<std::size_t>(r));
        }
    }
}

void ChildProcess::kill() {
    if (pid_ > 0 && !reaped_)
        ::kill(-pid_, SIGKILL);
}

std::string ChildProcess::wait() {
    if (reaped_)
        return how_;
    closeInput();
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    drainError(true);
    reaped_ = true;
    if (WIFEXITED(status)) {
        exited_ = true;
        status_ = WEXITSTATUS(status);
        how_ = fmt::format("exit {}", status_);
    } else if (WIFSIGNALED(status)) {
        int const sig = WTERMSIG(status);
        char const* abbrev = sigabbrev_np(sig);
        how_ = fmt::format("killed by SIG{} ({})", abbrev ? abbrev : std::to_string(sig).c_str(),
                           strsignal(sig));
    } else {
        how_ = "ended";
    }
    return how_;
}

} // namespace kiln::scheduler
