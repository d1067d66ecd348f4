// kiln cache [clear]
// Where the compile cache of sweeps is (scheduler/CompileCache.h) and how much it holds; `clear`
// empties it. Entries are never evicted on their own: this is how a user reclaims the space.
#include "Tuning.h"
#include "kiln/graph/Error.h"
#include "kiln/scheduler/CompileCache.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace kiln::cli {

namespace {

scheduler::CompileCache userCache() {
    auto folder = scheduler::CompileCache::defaultFolder();
    if (!folder)
        fail("no compile cache: KILN_CACHE_DIR is \"off\", or neither it, XDG_CACHE_HOME nor "
             "HOME is set");
    return scheduler::CompileCache(*folder);
}

} // namespace

void addCache(CLI::App& app) {
    auto* sub = app.add_subcommand("cache", "Show the compile cache of sweeps (KILN_CACHE_DIR), "
                                            "or clear it");
    sub->callback([sub] {
        if (!sub->get_subcommands().empty())
            return;
        auto const cache = userCache();
        fmt::print("{}: {:.1f} MB\n", cache.folder().string(), double(cache.bytes()) / 1e6);
    });
    auto* clear = sub->add_subcommand("clear", "Remove every compiled candidate from the cache");
    clear->callback([] {
        auto const cache = userCache();
        auto const bytes = cache.bytes();
        cache.clear();
        fmt::print("cleared {} ({:.1f} MB)\n", cache.folder().string(), double(bytes) / 1e6);
    });
}

} // namespace kiln::cli
