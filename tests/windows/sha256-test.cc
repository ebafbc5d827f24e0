// The digest on Windows (CNG, under wine), held to the cases every system's is (tests/sha256_cases.h).
#include <algorithm>

#include "sha256_cases.h"
