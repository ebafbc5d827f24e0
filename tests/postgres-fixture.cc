// The ctest fixture that starts one throwaway PostgreSQL server for every
// registry test and stops it afterwards (tests/postgres_server.h).
//   postgres-fixture start   writes the state file: {"dir": ...} or {"skip": why}
//   postgres-fixture stop    stops the server and removes its directory
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "postgres_server.h"

int main(int argc, char** argv) {
  using rung::test::postgres_state_file;
  if (argc != 2 || (std::strcmp(argv[1], "start") != 0 && std::strcmp(argv[1], "stop") != 0)) {
    fmt::print(stderr, "usage: postgres-fixture start|stop\n");
    return 2;
  }
  // Whatever a killed run left behind goes first.
  std::ifstream in(postgres_state_file());
  auto old = nlohmann::json::parse(in, nullptr, false);
  if (old.is_object() && old.contains("dir")) rung::test::stop_postgres(old["dir"].get<std::string>());
  std::filesystem::remove(postgres_state_file());
  if (std::strcmp(argv[1], "stop") == 0) return 0;

  const auto server = rung::test::start_postgres();
  nlohmann::json state = server.dir.empty() ? nlohmann::json{{"skip", server.skip}} : nlohmann::json{{"dir", server.dir}};
  std::ofstream(postgres_state_file()) << state.dump() << "\n";
  fmt::print("{}\n", server.dir.empty() ? "PostgreSQL cannot start here; the registry's PostgreSQL tests will skip: " + server.skip
                                        : "PostgreSQL serves the registry tests from " + server.dir);
  return 0;
}
