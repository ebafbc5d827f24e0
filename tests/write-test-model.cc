// Writes one of the tests' generated models to a file, for tests that drive a
// program from outside (tests/windows-cli-test.py runs rung.exe under wine on it).
//   write-test-model matmul_chain|elementwise PATH
#include <cstdio>
#include <string>

#include "model_builder.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write-test-model matmul_chain|elementwise PATH\n");
    return 2;
  }
  const std::string kind = argv[1];
  if (kind == "matmul_chain") {
    rung::test::write_matmul_chain_model(argv[2]);
  } else if (kind == "elementwise") {
    rung::test::write_elementwise_model(argv[2], {1, 16, 64});
  } else {
    std::fprintf(stderr, "write-test-model: no model '%s' (matmul_chain, elementwise)\n", kind.c_str());
    return 2;
  }
  return 0;
}
