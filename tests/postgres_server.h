// A throwaway PostgreSQL server for the registry's tests: initdb in a fresh
// directory under /tmp, listening on a unix socket there and nowhere else,
// durability off (these databases live for one test run). As root, the server
// runs as `nobody` (PostgreSQL refuses root). Under ctest one server serves
// every registry test (the registry_postgres fixture starts and stops it); a
// test binary run by hand starts its own, and a watchdog process stops it and
// removes its directory when the binary ends, however it ends.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

namespace rung::test {

struct PostgresServer {
  std::string dir;   // data/ and the socket; empty when none could start
  std::string skip;  // why none could start
  // A connection URL for database `db` on it.
  std::string url(const std::string& db) const;
};

// Starts a server (the fixture's `start`).
PostgresServer start_postgres();
// Stops the server in `dir` at once and removes the directory.
void stop_postgres(const std::string& dir);

// The state file the ctest fixture writes ("dir" or "skip" as JSON).
std::string postgres_state_file();

// The server this test process uses: the fixture's, or one started for this
// process. A fresh, empty database on it per call: its URL, or "" with `skip` set.
std::string fresh_postgres_database(std::string& skip);

// The registry's two databases, for tests that run one body against both.
enum class Db { kSqlite, kPostgresql };
inline void PrintTo(Db db, std::ostream* os) { *os << (db == Db::kSqlite ? "SQLite" : "PostgreSQL"); }
inline std::string db_name(Db db) { return db == Db::kSqlite ? "SQLite" : "PostgreSQL"; }

// A fresh, empty registry: a new SQLite file in `dir`, or a new database on the
// test server. "" with `skip` set when PostgreSQL cannot start here.
std::string fresh_registry(Db db, const std::filesystem::path& dir, std::string& skip);

}  // namespace rung::test
