// KernelLoaderSpec.cpp: code locations, reading code from disk, and PTX directives.
#include "kiln/runtime/KernelLoaderSpec.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace kiln::runtime {

std::string_view name(CodeFormat format) {
    switch (format) {
    case CodeFormat::Ptx:
        return "PTX";
    case CodeFormat::Cubin:
        return "cubin";
    case CodeFormat::CodeObject:
        return "code object";
    }
    return "unknown";
}

KernelLoaderSpec::KernelLoaderSpec(CodeFormat format, std::string code, std::string path,
                                   std::string name)
    : format_(format)
    , code_(std::move(code))
    , path_(std::move(path))
    , kernelName_(std::move(name)) {}

KernelLoaderSpec KernelLoaderSpec::ptxInMemory(std::string ptx, std::string kernelName) {
    return {CodeFormat::Ptx, std::move(ptx), {}, std::move(kernelName)};
}
KernelLoaderSpec KernelLoaderSpec::ptxOnDisk(std::string path, std::string kernelName) {
    return {CodeFormat::Ptx, {}, std::move(path), std::move(kernelName)};
}
KernelLoaderSpec KernelLoaderSpec::cubinInMemory(std::string image, std::string kernelName) {
    return {CodeFormat::Cubin, std::move(image), {}, std::move(kernelName)};
}
KernelLoaderSpec KernelLoaderSpec::cubinOnDisk(std::string path, std::string kernelName) {
    return {CodeFormat::Cubin, {}, std::move(path), std::move(kernelName)};
}
KernelLoaderSpec KernelLoaderSpec::codeObjectInMemory(std::string image, std::string kernelName) {
    return {CodeFormat::CodeObject, std::move(image), {}, std::move(kernelName)};
}
KernelLoaderSpec KernelLoaderSpec::codeObjectOnDisk(std::string path, std::string kernelName) {
    return {CodeFormat::CodeObject, {}, std::move(path), std::move(kernelName)};
}

KernelLoaderSpec KernelLoaderSpec::withManifest(KernelManifest manifest) const {
    KernelLoaderSpec copy = *this;
    copy.manifest_ = std::move(manifest);
    return copy;
}

std::string KernelLoaderSpec::describe() const {
    if (path_.empty())
        return std::string(name(format_)) + " in memory";
    return std::string(name(format_)) + " file '" + path_ + "'";
}

Expected<std::string> KernelLoaderSpec::image() const {
    if (path_.empty())
        return code_;
    std::ifstream file(path_, std::ios::binary);
    if (!file) {
        return Error(ErrorCode::NotFound, "cannot read the " + std::string(name(format_)) +
                                              " file '" + path_ + "' of kernel '" + kernelName_ +
                                              "'");
    }
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

namespace {

/// The identifier-like words of PTX text, skipping // and /* */ comments.
template <class F>
void forEachWord(std::string_view ptx, F&& visit) {
    std::size_t i = 0;
    auto const isWordChar = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' ||
               c == '%';
    };
    while (i < ptx.size()) {
        if (ptx.compare(i, 2, "//") == 0) {
            i = ptx.find('\n', i);
            if (i == std::string_view::npos)
                return;
        } else if (ptx.compare(i, 2, "/*") == 0) {
            i = ptx.find("*/", i + 2);
            if (i == std::string_view::npos)
                return;
            i += 2;
        } else if (isWordChar(ptx[i])) {
            std::size_t const start = i;
            while (i < ptx.size() && isWordChar(ptx[i]))
                ++i;
            if (!visit(ptx.substr(start, i - start)))
                return;
        } else {
            ++i;
        }
    }
}

} // namespace

std::string ptxTarget(std::string_view ptx) {
    std::string target;
    bool next = false;
    forEachWord(ptx, [&](std::string_view word) {
        if (next) {
            target = std::string(word);
            return false;
        }
        next = word == ".target";
        return true;
    });
    return target;
}

std::vector<std::string> ptxEntries(std::string_view ptx) {
    std::vector<std::string> entries;
    bool next = false;
    forEachWord(ptx, [&](std::string_view word) {
        if (next)
            entries.emplace_back(word);
        next = word == ".entry";
        return true;
    });
    return entries;
}

} // namespace kiln::runtime
