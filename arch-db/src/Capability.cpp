// Capability.cpp: name lookups for capabilities, instruction kinds and wait queues.
#include "kiln/arch-db/Capability.h"

#include "kiln/arch-db/Instruction.h"

#include <functional>
#include <unordered_map>

namespace kiln::arch {

namespace {

constexpr bool tableMatchesEnum() {
    for (std::size_t i = 0; i < kCapabilityTable.size(); ++i) {
        if (static_cast<std::size_t>(kCapabilityTable[i].capability) != i) {
            return false;
        }
    }
    return true;
}
static_assert(tableMatchesEnum(), "kCapabilityTable must list capabilities in enumerator order");

struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
        return std::hash<std::string_view>{}(text);
    }
};

template <typename Enum, typename Names>
std::optional<Enum> lookup(Names const& names, std::string_view name) {
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] == name) {
            return static_cast<Enum>(i);
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<Capability> capabilityFromName(std::string_view name) {
    // Built once; rule guards call has("HasWGMMA") often, so this is a hash lookup.
    static const auto index = [] {
        std::unordered_map<std::string, Capability, NameHash, std::equal_to<>> map;
        for (auto const& info : kCapabilityTable) {
            map.emplace(std::string(info.name), info.capability);
        }
        return map;
    }();
    auto found = index.find(name);
    if (found == index.end()) {
        return std::nullopt;
    }
    return found->second;
}

std::optional<InstructionKind> instructionKindFromName(std::string_view name) {
    return lookup<InstructionKind>(kInstructionKindNames, name);
}

std::optional<WaitQueue> waitQueueFromName(std::string_view name) {
    return lookup<WaitQueue>(kWaitQueueNames, name);
}

} // namespace kiln::arch
