// This process and its threads as the operating system sees them, in words
// that name no operating system.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/result.h"

namespace rung {

long this_process_id();

// This process ends when `parent` does, however that one ends (kill -9 included).
// False when `parent` is already gone: a parent that went before this was set
// leaves this process another parent.
bool end_with_parent(long parent);

// A crash ends this process at once with its own code, for the parent to report
// (jobs/runner.h): nothing waits on a person. On Windows, no error dialog and no
// debugger (SEM_NOGPFAULTERRORBOX, and a last exception filter that lets the
// process end with the exception's code); on POSIX a fatal signal already does
// so, and this does nothing. For a worker, first thing in main.
void crash_without_waiting();

// At most `mib` MiB of data for this process (a worker, first thing: a provider
// that allocates without end fails its allocation, and the worker ends saying
// so, instead of the machine running out). On POSIX RLIMIT_DATA, which counts
// the heap and private writable mappings, not the address space a GPU driver
// reserves; kUnsupported on Windows so far.
Status limit_this_process_data(std::uint64_t mib);
// Whether limit_this_process_data holds here: where it does not, a worker's
// default limit resolves to none rather than a figure nothing enforces.
bool process_data_limit_enforced();

// The calling thread, and the processes it starts, at a lower scheduling
// priority: background work (the probe, engine builds) must not compete with
// the work it is meant to speed up.
void lower_this_thread_priority();

// The most memory this process has held resident so far, in KiB; 0 when unknown.
double peak_resident_kib();

// CPU time the calling thread, or this whole process, has used, user and system, in seconds; 0 when unknown.
double this_thread_cpu_seconds();
double this_process_cpu_seconds();

// The resident high-water mark from the last reset_resident_high_water() (or the
// start), in KiB; 0 when unknown. On Linux VmHWM, which /proc/self/clear_refs
// resets; on Windows the peak working set, which nothing resets (the reset does nothing).
double resident_high_water_kib();
void reset_resident_high_water();

// The machine's load averaged over the last minute (runnable threads); nullopt where the system keeps none.
std::optional<double> load_average_one_minute();

// The arguments this process was started with, argv[0] first, in UTF-8 (as the
// kernel recorded them, or as Windows' command line splits); empty when unknown.
std::vector<std::string> this_process_arguments();

// The machine's network name; "unknown" when it has none to give.
std::string host_name();

// Whether this process may create files in the directory `dir` (its permissions
// as this process's user sees them); false when it is missing or not a directory.
bool may_create_files_in(const std::filesystem::path& dir);

}  // namespace rung
