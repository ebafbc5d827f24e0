// What the portable half of the cleanup (os/termination.cpp: the work
// directories) shares with each system's half (os/posix/termination.cpp:
// signals and children; os/windows/termination.cpp: console events): one lock
// and one flag, so a thread registering something while the cleanup runs
// undoes it and waits for the end instead.
#pragma once

#include <mutex>

namespace rung {

std::mutex& termination_mutex();
bool termination_begun();
void begin_termination();               // from here on, nothing new is tracked
void remove_tracked_work_dirs();        // with termination_mutex() held
[[noreturn]] void park_until_the_end();  // per system: sleeps until the process ends

}  // namespace rung
