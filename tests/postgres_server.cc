#include "postgres_server.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "registry/database.h"
#include "test_support.h"

namespace rung::test {
namespace fs = std::filesystem;
namespace {

// Debian installs the server's programs here, one directory per major version.
std::string postgres_bin_dir() {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it("/usr/lib/postgresql", ec), end; !ec && it != end; it.increment(ec)) {
    if (fs::exists(it->path() / "bin" / "initdb") && fs::exists(it->path() / "bin" / "pg_ctl")) found.push_back(it->path() / "bin");
  }
  if (found.empty()) return {};
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    return std::stoi(a.parent_path().filename().string()) < std::stoi(b.parent_path().filename().string());
  });
  return found.back().string();
}

// As root, run as `nobody`: PostgreSQL will not run as root.
std::string as_server_user(const std::string& command) {
  if (geteuid() != 0) return command;
  return "runuser -u nobody -- " + command;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

std::string PostgresServer::url(const std::string& db) const { return fmt::format("postgresql://rung@/{}?host={}", db, dir); }

PostgresServer start_postgres() {
  PostgresServer s;
  const std::string bin = postgres_bin_dir();
  if (bin.empty()) {
    s.skip = "PostgreSQL's server is not installed (no /usr/lib/postgresql/*/bin/initdb): tools/bootstrap.sh installs it";
    return s;
  }
  const fs::path dir = make_temp_dir("rung-pg");
  if (geteuid() == 0) {
    const passwd* nobody = getpwnam("nobody");
    if (nobody == nullptr || chown(dir.c_str(), nobody->pw_uid, nobody->pw_gid) != 0) {
      s.skip = "running as root and cannot hand a directory to the user nobody for the server";
      fs::remove_all(dir);
      return s;
    }
  }
  const std::string data = (dir / "data").string(), log = (dir / "server.log").string();
  auto initdb = run_command(as_server_user(fmt::format("{}/initdb -D {} -U rung -A trust -E UTF8 --no-sync", bin, quoted(data))));
  if (initdb.exit_code != 0) {
    s.skip = fmt::format("initdb failed (exit {}): {}", initdb.exit_code, initdb.err.substr(0, 400));
    stop_postgres(dir.string());
    return s;
  }
  // Only a unix socket in `dir`; no TCP port to collide with anything else on the machine.
  const std::string options = fmt::format("-k {} -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off", dir.string());
  auto started = run_command(as_server_user(fmt::format("{}/pg_ctl -D {} -l {} -w -t 60 -o {} start", bin, quoted(data), quoted(log), quoted(options))));
  if (started.exit_code != 0) {
    s.skip = fmt::format("the server did not start (exit {}): {} {}", started.exit_code, started.err.substr(0, 300), read_file(log).substr(0, 300));
    stop_postgres(dir.string());
    return s;
  }
  s.dir = dir.string();
  return s;
}

namespace {

// A shell command that stops the server in `dir` at once and removes the directory.
std::string stop_command(const std::string& dir) {
  const fs::path data = fs::path(dir) / "data";
  return fmt::format("if [ -f {0}/postmaster.pid ]; then {1} >/dev/null 2>&1; fi; rm -rf {2}", quoted(data.string()),
                     as_server_user(fmt::format("{}/pg_ctl -D {} -m immediate -w -t 30 stop", postgres_bin_dir(), quoted(data.string()))),
                     quoted(dir));
}

}  // namespace

void stop_postgres(const std::string& dir) {
  if (!dir.empty()) (void)run_command(stop_command(dir));
}

std::string postgres_state_file() { return RUNG_TEST_POSTGRES_STATE; }

namespace {

// A server started by this process, stopped by a watchdog child when this
// process ends (its end of a pipe closes however it ends, crash included).
PostgresServer start_watched_postgres() {
  PostgresServer s = start_postgres();
  if (s.dir.empty()) return s;
  // The watchdog reads the pipe until every write end is closed; only this
  // process holds one (close-on-exec keeps it from the commands tests run).
  const std::string watch = "cat >/dev/null 2>&1; exec >/dev/null 2>&1; " + stop_command(s.dir);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return s;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[0], STDIN_FILENO);  // dup2 clears close-on-exec on the copy
    setsid();  // out of the test's process group: a kill of the group must not take the watchdog with it
    execl("/bin/sh", "sh", "-c", watch.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[0]);  // the write end stays open, unused, until this process ends
  return s;
}

const PostgresServer& this_process_server() {
  static const PostgresServer server = [] {
    std::ifstream in(postgres_state_file());
    auto state = nlohmann::json::parse(in, nullptr, false);
    if (state.is_object() && state.contains("skip")) return PostgresServer{"", state["skip"].get<std::string>()};
    if (state.is_object() && state.contains("dir")) {
      PostgresServer fixture{state["dir"].get<std::string>(), ""};
      if (registry::open_postgresql(fixture.url("postgres"))) return fixture;
    }
    return start_watched_postgres();
  }();
  return server;
}

}  // namespace

std::string fresh_postgres_database(std::string& skip) {
  const PostgresServer& server = this_process_server();
  if (server.dir.empty()) {
    skip = server.skip;
    return {};
  }
  static std::atomic<int> counter{0};
  const std::string name = fmt::format("rung_test_{}_{}", getpid(), counter++);
  auto admin = registry::open_postgresql(server.url("postgres"));
  if (!admin) {
    skip = "the test server stopped answering: " + admin.error().message;
    return {};
  }
  if (auto s = (*admin)->execute_script("CREATE DATABASE " + name); !s) {
    skip = "cannot create a database on the test server: " + s.error().message;
    return {};
  }
  return server.url(name);
}

std::string fresh_registry(Db db, const fs::path& dir, std::string& skip) {
  if (db == Db::kPostgresql) return fresh_postgres_database(skip);
  static std::atomic<int> counter{0};
  return "sqlite:" + (dir / fmt::format("registry-{}.sqlite", counter++)).string();
}

}  // namespace rung::test
