// ScopedEnvironment.h: an environment variable set for one scope, for the tests of the libraries
// the runtime finds through a variable (KILN_HIP_RUNTIME, KILN_LLVM_ASSEMBLER, ...).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace kiln::runtime {

/// Sets an environment variable for a scope (unsets it for nullptr) and restores it after.
class ScopedEnvironment {
public:
    ScopedEnvironment(char const* name, char const* value)
        : name_(name) {
        if (char const* old = std::getenv(name))
            old_ = old;
        if (value)
            setenv(name, value, 1);
        else
            unsetenv(name);
    }
    ~ScopedEnvironment() {
        if (old_)
            setenv(name_.c_str(), old_->c_str(), 1);
        else
            unsetenv(name_.c_str());
    }
    ScopedEnvironment(ScopedEnvironment const&) = delete;
    ScopedEnvironment& operator=(ScopedEnvironment const&) = delete;

private:
    std::string name_;
    std::optional<std::string> old_;
};

} // namespace kiln::runtime
