// Occurrences.h: how many times a piece of text stands in emitted code (overlapping ones
// counted), for the tests that say what a kernel issues by counting its instructions.
#pragma once

#include <cstddef>
#include <string>

namespace kiln::test {

/// The places `what` starts in `text`.
inline std::size_t occurrences(std::string const& text, std::string const& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

/// The 16-byte global loads in PTX `code`, with an L1 eviction priority (what is read again,
/// and a row's last read) or without.
inline std::size_t globalVectorLoads(std::string const& code) {
    return occurrences(code, "ld.global.v4.b32") +
           occurrences(code, "ld.global.L1::evict_last.v4.b32") +
           occurrences(code, "ld.global.L1::no_allocate.v4.b32");
}

} // namespace kiln::test
