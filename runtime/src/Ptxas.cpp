// Ptxas.cpp: finding ptxas and running it on PTX text, for the cubin and its resource use.
#include "kiln/runtime/Ptxas.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace kiln::runtime {

namespace {

bool executable(std::string const& path) {
    return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}

// A private temporary folder, removed with the object.
class TemporaryFolder {
public:
    TemporaryFolder() {
        std::string pattern = (std::filesystem::temp_directory_path() / "kiln-ptxas-XXXXXX");
        if (::mkdtemp(pattern.data()))
            path_ = pattern;
    }
    ~TemporaryFolder() {
        std::error_code ec;
        if (!path_.empty())
            std::filesystem::remove_all(path_, ec);
    }
    TemporaryFolder(TemporaryFolder const&) = delete;
    TemporaryFolder& operator=(TemporaryFolder const&) = delete;
    std::string const& path() const { return path_; }

private:
    std::string path_;
};

int firstNumber(std::string const& log, std::string const& pattern) {
    std::smatch m;
    if (std::regex_search(log, m, std::regex(pattern)))
        return std::stoi(m[1].str());
    return 0;
}

} // namespace

Expected<std::string> findPtxas() {
    if (char const* named = std::getenv("KILN_PTXAS"); named && *named) {
        if (executable(named))
            return std::string(named);
        return Error(ErrorCode::NotFound,
                     std::string("KILN_PTXAS names '") + named + "', which is not executable");
    }
    if (executable("/usr/local/cuda/bin/ptxas"))
        return std::string("/usr/local/cuda/bin/ptxas");
    if (char const* path = std::getenv("PATH")) {
        std::stringstream folders(path);
        for (std::string folder; std::getline(folders, folder, ':');)
            if (executable(folder + "/ptxas"))
                return folder + "/ptxas";
    }
    return Error(ErrorCode::NotFound,
                 "no ptxas: set KILN_PTXAS, or install the CUDA toolkit in /usr/local/cuda");
}

Expected<PtxasResult> assemblePtx(std::string const& ptx, std::string const& target) {
    auto ptxas = findPtxas();
    if (!ptxas)
        return ptxas.error();
    TemporaryFolder folder;
    if (folder.path().empty())
        return Error(ErrorCode::InvalidArgument, "cannot make a temporary folder for ptxas");
    std::string const input = folder.path() + "/kernel.ptx",
                      output = folder.path() + "/kernel.cubin", log = folder.path() + "/ptxas.log";
    {
        std::ofstream out(input, std::ios::binary);
        out << ptx;
        if (!out)
            return Error(ErrorCode::InvalidArgument, "cannot write " + input);
    }
    // posix_spawn, not fork: glibc starts the child with vfork semantics, so a compile does not
    // pay for copying the parent's page tables (fork() of a large process cost 15-40 ms each),
    // and the child runs no code of ours between the fork and the exec.
    posix_spawn_file_actions_t actions;
    if (::posix_spawn_file_actions_init(&actions) != 0)
        return Error(ErrorCode::InvalidArgument, "cannot start ptxas (posix_spawn_file_actions)");
    ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    std::string const arch = "-arch=" + target;
    std::string const name = "ptxas", verbose = "-v", out = "-o";
    std::array<char*, 7> argv{const_cast<char*>(name.c_str()),
                              const_cast<char*>(arch.c_str()),
                              const_cast<char*>(verbose.c_str()),
                              const_cast<char*>(input.c_str()),
                              const_cast<char*>(out.c_str()),
                              const_cast<char*>(output.c_str()),
                              nullptr};
    pid_t pid = 0;
    int const spawned =
        ::posix_spawn(&pid, ptxas.value().c_str(), &actions, nullptr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        return Error(ErrorCode::InvalidArgument,
                     "cannot start " + ptxas.value() + ": " + std::strerror(spawned));
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::ifstream logFile(log);
    std::string const text((std::istreambuf_iterator<char>(logFile)),
                           std::istreambuf_iterator<char>());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return Error(ErrorCode::JitFailed,
                     "ptxas -arch=" + target + " failed (" +
                         (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                            : std::string("killed")) +
                         "):\n" + text);
    PtxasResult result;
    result.log = text;
    result.registers = firstNumber(text, R"(Used (\d+) registers)");
    result.spillStores = firstNumber(text, R"((\d+) bytes spill stores)");
    result.spillLoads = firstNumber(text, R"((\d+) bytes spill loads)");
    result.sharedBytes = firstNumber(text, R"((\d+) bytes smem)");
    std::ifstream cubin(output, std::ios::binary);
    result.cubin.assign(std::istreambuf_iterator<char>(cubin), std::istreambuf_iterator<char>());
    if (result.cubin.empty())
        return Error(ErrorCode::JitFailed, "ptxas wrote no cubin for " + target + ":\n" + text);
    return result;
}

} // namespace kiln::runtime
