#include "kiln/rules/ArchFacts.h"

#include "kiln/arch-db/ArchError.h"
#include "kiln/arch-db/ArchLibrary.h"
#include "kiln/graph/Error.h"

namespace kiln::rules {

ArchFacts archFacts(std::string const& target) {
    arch::Arch const* a = nullptr;
    try {
        a = &arch::ArchLibrary::get(target);
    } catch (arch::ArchError const& e) {
        throw UserError(e.what());
    }
    return [a](std::string const& name) -> std::optional<std::int64_t> {
        if (auto v = a->fact(name))
            return v;
        try {
            return a->has(name) ? 1 : 0;
        } catch (arch::ArchError const&) {
            return std::nullopt; // neither a fact nor a capability
        }
    };
}

bool isArchFact(std::string const& name) {
    for (auto const& a : arch::ArchLibrary::instance().targets()) {
        if (a.fact(name))
            return true;
        try {
            a.has(name);
            return true;
        } catch (arch::ArchError const&) {
        }
    }
    return false;
}

} // namespace kiln::rules
