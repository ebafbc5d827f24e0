// The line channel on Windows (os/windows/line_channel.cpp: a named pipe), under
// wine, held to the cases every system's is (tests/line_channel_cases.h). Across
// processes: tests/windows/child-process-test.cc.
#include "line_channel_cases.h"
