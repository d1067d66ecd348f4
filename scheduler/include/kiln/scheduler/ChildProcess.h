// ChildProcess.h: a program run beside the sweep, spoken to over pipes.
//
// Compiles and measurements run in child processes so that a candidate that crashes, hangs or
// exhausts memory takes down only its child: the sweep sees an exit status or a timeout and
// records the candidate's failure. A child reads JSON lines on stdin and answers JSON lines on
// stdout; its stderr is kept (the last few KB) for the failure message. The child gets its own
// process group, so killing it also kills what it started.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kiln::scheduler {

/// How a read of the child's next line ended.
enum class ReadStatus : std::uint8_t { Line, Closed, Timeout };

class ChildProcess {
public:
    /// Starts `argv[0]` (a path, or a name looked up in PATH) with `argv`; a UserError when it
    /// cannot be started.
    explicit ChildProcess(std::vector<std::string> const& argv);
    ~ChildProcess(); ///< kills the child if it still runs, and reaps it
    ChildProcess(ChildProcess const&) = delete;
    ChildProcess& operator=(ChildProcess const&) = delete;

    pid_t pid() const { return pid_; }

    /// Writes `line` and a newline to the child's stdin; false when the child is gone.
    bool writeLine(std::string const& line);
    /// Closes the child's stdin (end of requests).
    void closeInput();
    /// The next line of the child's stdout, waiting at most `timeout`.
    ReadStatus readLine(std::string& line, std::chrono::duration<double> timeout);

    /// Kills the child's process group (SIGKILL).
    void kill();
    /// Waits for the child to exit and describes how: "exit 0", "exit 3", "killed by SIGSEGV
    /// (Segmentation fault)". Idempotent.
    std::string wait();
    /// Whether it exited normally with status 0 (after wait()).
    bool succeeded() const { return exited_ && status_ == 0; }
    /// The last bytes the child wrote to stderr.
    std::string const& errorOutput() const { return stderr_; }

private:
    void drainError(bool block);

    pid_t pid_ = -1;
    int in_ = -1, out_ = -1, err_ = -1;
    std::string buffer_; ///< stdout read but not yet returned
    std::string stderr_;
    bool reaped_ = false, exited_ = false;
    int status_ = 0;
    std::string how_;
};

} // namespace kiln::scheduler
