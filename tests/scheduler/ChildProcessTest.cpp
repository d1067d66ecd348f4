// Child processes: lines in and out, exit statuses and signals described, stderr kept, a
// timeout that leaves the child to be killed, and a program that cannot be started.
#include "kiln/scheduler/ChildProcess.h"

#include <gtest/gtest.h>

using namespace kiln::scheduler;
using namespace std::chrono_literals;

TEST(ChildProcess, LinesInAndOutAndTheExitStatus) {
    ChildProcess child({"/bin/sh", "-c", "read x; echo \"got $x\"; echo oops >&2; exit 3"});
    ASSERT_TRUE(child.writeLine("42"));
    std::string line;
    ASSERT_EQ(child.readLine(line, 10s), ReadStatus::Line);
    EXPECT_EQ(line, "got 42");
    EXPECT_EQ(child.readLine(line, 10s), ReadStatus::Closed);
    EXPECT_EQ(child.wait(), "exit 3");
    EXPECT_FALSE(child.succeeded());
    EXPECT_EQ(child.errorOutput(), "oops\n");
    EXPECT_EQ(child.wait(), "exit 3"); // idempotent
}

TEST(ChildProcess, ATimeoutThenAKill) {
    ChildProcess child({"/bin/sh", "-c", "sleep 30"});
    std::string line;
    EXPECT_EQ(child.readLine(line, 0.2s), ReadStatus::Timeout);
    child.kill();
    EXPECT_EQ(child.wait(), "killed by SIGKILL (Killed)");
}

TEST(ChildProcess, ASignalIsNamed) {
    ChildProcess child({"/bin/sh", "-c", "kill -SEGV $$"});
    std::string line;
    EXPECT_EQ(child.readLine(line, 10s), ReadStatus::Closed);
    EXPECT_EQ(child.wait(), "killed by SIGSEGV (Segmentation fault)");
}

TEST(ChildProcess, AProgramThatCannotBeStarted) {
    ChildProcess child({"/nonexistent/kiln-worker"});
    std::string line;
    EXPECT_EQ(child.readLine(line, 10s), ReadStatus::Closed);
    EXPECT_EQ(child.wait(), "exit 127");
    EXPECT_EQ(child.errorOutput(), "kiln: cannot execute the worker program\n");
}
