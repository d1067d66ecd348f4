// ArchLibrary.cpp: loading the database once (embedded or KILN_ARCH_FILE) and finding targets.
#include "kiln/arch-db/ArchLibrary.h"

#include "ArchDatabaseReader.h"
#include "EmbeddedDatabase.h"
#include "kiln/arch-db/ArchError.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kiln::arch {

ArchLibrary::ArchLibrary(std::vector<Arch> targets, std::vector<std::string> defaultTargets,
                         std::string origin)
    : targets_(std::move(targets))
    , defaultTargets_(std::move(defaultTargets))
    , origin_(std::move(origin)) {
    std::sort(targets_.begin(), targets_.end(),
              [](Arch const& a, Arch const& b) { return a.name() < b.name(); });
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        if (!index_.emplace(targets_[i].name(), i).second) {
            throw ArchError(ArchError::Kind::MalformedDatabase,
                            origin_ + ": target '" + targets_[i].name() + "' is defined twice");
        }
    }
}

Arch const& ArchLibrary::get(std::string_view target) {
    return instance().target(target);
}

ArchLibrary const& ArchLibrary::instance() {
    // A function-local static is initialised once, thread-safely; if loading throws, the next
    // call tries again and reports the same error.
    static ArchLibrary const library = loadFromEnvironment();
    return library;
}

ArchLibrary ArchLibrary::loadFromEnvironment() {
    char const* path = std::getenv(kArchFileVariable);
    if (path != nullptr && *path != '\0') {
        return fromFile(path);
    }
    return embedded();
}

ArchLibrary ArchLibrary::embedded() {
    return fromJson(detail::embeddedDatabaseText(), "embedded arch database");
}

std::string_view ArchLibrary::embeddedJson() {
    return detail::embeddedDatabaseText();
}

ArchLibrary ArchLibrary::fromJson(std::string_view text, std::string origin) {
    detail::Database database = detail::readDatabase(text, origin);
    return ArchLibrary(std::move(database.targets), std::move(database.defaultTargets), origin);
}

ArchLibrary ArchLibrary::fromFile(std::string const& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        throw ArchError(ArchError::Kind::MalformedDatabase,
                        std::string(kArchFileVariable) + "=" + path + ": cannot open the file");
    }
    std::ostringstream text;
    text << file.rdbuf();
    return fromJson(text.str(), path);
}

Arch const* ArchLibrary::find(std::string_view name) const {
    auto found = index_.find(name);
    return found == index_.end() ? nullptr : &targets_[found->second];
}

Arch const& ArchLibrary::target(std::string_view name) const {
    if (Arch const* found = find(name)) {
        return *found;
    }
    std::string context = origin_ == "embedded arch database" ? "" : " in " + origin_;
    throw ArchError::unknownName(ArchError::Kind::UnknownTarget, "target", name, context,
                                 targetNames());
}

std::string const& ArchLibrary::defaultTarget() const {
    if (defaultTargets_.empty()) {
        std::string known;
        for (auto const& target : targets_) {
            known += (known.empty() ? "" : ", ") + target.name();
        }
        throw ArchError(ArchError::Kind::UnknownTarget,
                        origin_ +
                            " names no default target (\"default_targets\"); name one of "
                            "its targets: " +
                            known);
    }
    return defaultTargets_.front();
}

std::vector<std::string> ArchLibrary::targetNames() const {
    std::vector<std::string> names;
    names.reserve(targets_.size());
    for (auto const& target : targets_) {
        names.push_back(target.name());
    }
    return names;
}

} // namespace kiln::arch
