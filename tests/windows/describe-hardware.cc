// Prints this machine's hardware description (os/hardware_description.h) on
// stdout: under wine, the host's Linux tree reads it back with the same reader
// as a windows.json fixture (tests/windows-description-test.sh).
#include <cstdio>

#include "os/hardware_description.h"

int main() {
  auto text = rung::native_hardware_description();
  if (!text) return 1;
  std::fwrite(text->data(), 1, text->size(), stdout);
  std::fputc('\n', stdout);
  return 0;
}
