// The runtime builds a launch opens. Every build found is opened (its ELF read,
// dlopen'ed, asked for its providers) unless the probe cache vouches for the
// one a full discovery would choose: then only that one is, or, for a launch
// that only answers (the `rung` front), none (discover_launch_runtimes).
//
// The cache keeps, beside its decision, a record of the builds it was made
// with, taken before any of them was opened: the directories searched, and for
// each library found (in search order) its origin, its file identity (device,
// inode, size, mtime, ctime: os/file_identity.h) and whether its path passed the
// trust check; the platforms recognised on the hardware; whether writable
// builds were allowed; then what came of opening each one and which was chosen.
//
// Why one build suffices when today's record equals the kept one: which build a
// full discovery chooses (choose_build) depends only on the candidates in search
// order with their origins (compared), on what opening each one gives — whether
// it loads, its providers — and on the platforms that score those providers
// (compared). What opening a build gives is fixed by its bytes and its path's
// trust (compared: an unchanged identity, ctime included, is unchanged bytes and
// mode; the trust check is redone, stat by stat). Dropping a build that lost
// cannot change the winner; the winner itself is opened in full, every check
// made. The one thing not fixed by the file is a load that failed for want of
// something outside it (a missing dependency): a record holding such a failure
// never vouches, and that launch opens every build.
#pragma once

#include <filesystem>
#include <string>

#include "rung/hardware.h"
#include "rung/result.h"
#include "rung/runtime.h"

namespace rung {

struct LaunchRuntimes {
  RuntimeDiscovery discovery;
  std::string found;  // the record of the builds found, before any was opened (JSON text)
  std::string seen;   // `found` with what came of opening each build and the choice (JSON text), for the cache to keep; "" when warm
  bool warm = false;  // only the build the cache named was opened
};

// `cache_file`: the probe cache (probe/cache.h) whose record may vouch; with
// `allow_warm` false (a re-probe), every build is opened. With `open_vouched`
// false (a launch that only answers, runs nothing: ProbeOptions::open_vouched_build),
// a build the record vouches for is not opened either while every library it
// needs still resolves as the loader would (os/loader_search.h): what opening it
// gave (version, API, providers, score) is read from the record, which keeps it
// since the decision was made, and its `api` stays null. Errors as discover_runtimes'.
Result<LaunchRuntimes> discover_launch_runtimes(const RuntimeSearchOptions& options, const Hardware& hardware,
                                                const std::filesystem::path& cache_file, bool allow_warm, bool open_vouched = true);

// Whether a cache's kept record (its `seen`, JSON text, maybe "") was made with the builds of `found`.
bool same_builds(const std::string& kept_seen, const std::string& found);

}  // namespace rung
