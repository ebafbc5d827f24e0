// The registry's two databases behind one interface: SQLite (embedded, the
// default) and PostgreSQL (a server, for a team or a fleet). Statements are
// written once with `?` placeholders; each backend binds them its own way.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "os/utc_now.h"
#include "rung/result.h"

namespace rung::registry {

// A column value: NULL, an integer, a real or text.
using Value = std::variant<std::monostate, std::int64_t, double, std::string>;
using Row = std::vector<Value>;

bool is_null(const Value& v);
std::int64_t as_int(const Value& v);       // 0 for NULL
double as_real(const Value& v);            // 0 for NULL; integers widen
std::string as_text(const Value& v);       // "" for NULL
Value text_or_null(const std::string& s);  // "" becomes NULL

enum class Backend { kSqlite, kPostgresql };

class Database {
 public:
  virtual ~Database() = default;
  virtual Backend backend() const = 0;
  virtual std::string describe() const = 0;  // "SQLite /path/registry.sqlite", "PostgreSQL db on host"

  // One statement with `?` placeholders, bound in order. Rows it returns, if any.
  virtual Result<std::vector<Row>> query(std::string_view sql, const std::vector<Value>& params = {}) = 0;
  // Several statements without parameters (a migration).
  virtual Status execute_script(std::string_view sql) = 0;

  // A write transaction: on SQLite, BEGIN IMMEDIATE takes the write lock at
  // once, so two writers queue rather than deadlock; on PostgreSQL, BEGIN
  // (unique constraints and ON CONFLICT settle races between writers).
  virtual Status begin_write() = 0;
  virtual Status begin_read() = 0;  // a consistent snapshot for a multi-statement read
  virtual Status commit() = 0;
  virtual void rollback() = 0;
  // Whether the last failure was one to run the transaction again for (a
  // PostgreSQL deadlock or serialisation failure between two writers).
  virtual bool last_failure_transient() const { return false; }
};

// Whether opening may create what is missing (a SQLite file and its
// directory; the schema in an empty database) or only opens a registry that is
// there (kNotFound otherwise, naming it).
enum class OpenMode { kCreateIfMissing, kExistingOnly };

// Opens the registry a URL names: `postgresql://...` (or `postgres://`),
// `sqlite:PATH`, or a plain file path (SQLite). The schema is brought up to
// date (registry/migrations.h) before it is returned.
Result<std::unique_ptr<Database>> open_database(const std::string& url, OpenMode mode = OpenMode::kCreateIfMissing);

// Every message that shows a registry URL, or text a database client wrote
// about one, passes through here: `text` with its secrets replaced by "***" —
// the password of `user:password@host`, and the value of any parameter whose
// name ends in "password" (password, sslpassword; percent-encoded or not; in a
// URL's query or a key=value string, quoted or not), and the whole value of
// any parameter whose decoded value holds "password" (`options=-c
// password=...`). With `url`, every secret `url` holds is also masked wherever
// else it stands alone in `text` (a client's error quoting a token of the
// URL) — never inside another word, so a short password is not spelled out.
std::string mask_secrets(std::string_view text, std::string_view url = {});

// RUNG_REGISTRY, else `sqlite:` a file under the user's data directory
// (rung/user_dirs.h): $XDG_DATA_HOME/rung/registry.sqlite, else
// ~/.local/share/rung/registry.sqlite, else <tmp>/rung-<uid>/data/registry.sqlite;
// kInvalidArgument naming what to set when none of them can be used.
Result<std::string> default_registry_url();

// Runs `body` inside a write transaction: committed when it returns ok, rolled
// back (and its error returned) otherwise; run again, a few times, when the
// database chose it as the loser of a deadlock.
Status in_write_transaction(Database& db, const std::function<Status()>& body);
Status in_read_transaction(Database& db, const std::function<Status()>& body);

// Now, UTC, ISO 8601 to the second: when a row was written (os/utc_now).
using rung::utc_now;

// The backends, for open_database.
Result<std::unique_ptr<Database>> open_sqlite(const std::string& path, OpenMode mode = OpenMode::kCreateIfMissing);
Result<std::unique_ptr<Database>> open_postgresql(const std::string& url);

// PostgreSQL's time limits. Connecting: the URL's connect_timeout, else
// PGCONNECT_TIMEOUT, else this. A statement: RUNG_REGISTRY_STATEMENT_TIMEOUT
// (whole seconds, 0 for none), else what the connection already sets (the
// URL's options=-c statement_timeout=..., PGOPTIONS, the server's or the
// role's setting), else this.
inline constexpr int kPostgresConnectTimeoutSeconds = 5;
inline constexpr int kPostgresStatementTimeoutSeconds = 30;

}  // namespace rung::registry
