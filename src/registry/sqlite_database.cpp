// The registry on SQLite: one file, nothing to start. Write-ahead logging lets
// readers go on while one writer writes; a busy timeout makes a second writer
// wait its turn instead of failing.
#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>

#include "os/regular_file.h"
#include "os/system_library.h"
#include "registry/database.h"

namespace rung::registry {
namespace {
namespace fs = std::filesystem;

constexpr int kBusyTimeoutMs = 60'000;

// The SQLite functions the registry calls, each typed by SQLite's own declaration;
// libsqlite3 is loaded when a registry is first opened (os/system_library.h), not at exec.
struct LibSqlite {
  decltype(&::sqlite3_bind_double) bind_double;
  decltype(&::sqlite3_bind_int64) bind_int64;
  decltype(&::sqlite3_bind_null) bind_null;
  decltype(&::sqlite3_bind_text) bind_text;
  decltype(&::sqlite3_busy_timeout) busy_timeout;
  decltype(&::sqlite3_close_v2) close_v2;
  decltype(&::sqlite3_column_bytes) column_bytes;
  decltype(&::sqlite3_column_count) column_count;
  decltype(&::sqlite3_column_double) column_double;
  decltype(&::sqlite3_column_int64) column_int64;
  decltype(&::sqlite3_column_text) column_text;
  decltype(&::sqlite3_column_type) column_type;
  decltype(&::sqlite3_errmsg) errmsg;
  decltype(&::sqlite3_errstr) errstr;
  decltype(&::sqlite3_exec) exec;
  decltype(&::sqlite3_extended_errcode) extended_errcode;
  decltype(&::sqlite3_finalize) finalize;
  decltype(&::sqlite3_free) free;
  decltype(&::sqlite3_get_autocommit) get_autocommit;
  decltype(&::sqlite3_open_v2) open_v2;
  decltype(&::sqlite3_prepare_v2) prepare_v2;
  decltype(&::sqlite3_step) step;
};

Result<const LibSqlite*> libsqlite() {
  return bind_system_library<LibSqlite>(SystemLibrary::kSqlite, "SQLite, for the registry (Debian's package libsqlite3-0 provides it)", [](SymbolBinder& bind, LibSqlite& q) {
        bind("sqlite3_bind_double", q.bind_double);
        bind("sqlite3_bind_int64", q.bind_int64);
        bind("sqlite3_bind_null", q.bind_null);
        bind("sqlite3_bind_text", q.bind_text);
        bind("sqlite3_busy_timeout", q.busy_timeout);
        bind("sqlite3_close_v2", q.close_v2);
        bind("sqlite3_column_bytes", q.column_bytes);
        bind("sqlite3_column_count", q.column_count);
        bind("sqlite3_column_double", q.column_double);
        bind("sqlite3_column_int64", q.column_int64);
        bind("sqlite3_column_text", q.column_text);
        bind("sqlite3_column_type", q.column_type);
        bind("sqlite3_errmsg", q.errmsg);
        bind("sqlite3_errstr", q.errstr);
        bind("sqlite3_exec", q.exec);
        bind("sqlite3_extended_errcode", q.extended_errcode);
        bind("sqlite3_finalize", q.finalize);
        bind("sqlite3_free", q.free);
        bind("sqlite3_get_autocommit", q.get_autocommit);
        bind("sqlite3_open_v2", q.open_v2);
        bind("sqlite3_prepare_v2", q.prepare_v2);
        bind("sqlite3_step", q.step);
      });
}

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(const LibSqlite* sq, sqlite3* db, fs::path path) : sq_(sq), db_(db), path_(std::move(path)) {}
  ~SqliteDatabase() override { sq_->close_v2(db_); }
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  Backend backend() const override { return Backend::kSqlite; }
  // A file path holds no secret, unless someone gave a connection string where a path goes.
  std::string describe() const override { return fmt::format("SQLite {}", mask_secrets(path_.string())); }

  Result<std::vector<Row>> query(std::string_view sql, const std::vector<Value>& params) override {
    sqlite3_stmt* stmt = nullptr;
    if (sq_->prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) return failure("preparing");
    Statement guard{sq_, stmt};
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (bind(stmt, static_cast<int>(i + 1), params[i]) != SQLITE_OK) return failure("binding");
    }
    std::vector<Row> rows;
    for (;;) {
      const int rc = sq_->step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return failure("running");
      Row row;
      for (int c = 0, n = sq_->column_count(stmt); c < n; ++c) row.push_back(column(stmt, c));
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Status execute_script(std::string_view sql) override {
    char* message = nullptr;
    if (sq_->exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message) == SQLITE_OK) return {};
    Error e{ErrorCode::kIo, fmt::format("{}: {}", describe(), message ? message : "unknown error")};
    sq_->free(message);
    return e;
  }

  // IMMEDIATE: the write lock now, so two writers never both read and then both try to upgrade.
  Status begin_write() override { return execute_script("BEGIN IMMEDIATE"); }
  Status begin_read() override { return execute_script("BEGIN"); }
  Status commit() override { return execute_script("COMMIT"); }
  void rollback() override {
    if (!sq_->get_autocommit(db_)) (void)execute_script("ROLLBACK");
  }

 private:
  struct Statement {
    const LibSqlite* sq_;
    sqlite3_stmt* stmt;
    ~Statement() { sq_->finalize(stmt); }
  };

  int bind(sqlite3_stmt* stmt, int index, const Value& v) {
    if (std::holds_alternative<std::int64_t>(v)) return sq_->bind_int64(stmt, index, std::get<std::int64_t>(v));
    if (std::holds_alternative<double>(v)) return sq_->bind_double(stmt, index, std::get<double>(v));
    if (std::holds_alternative<std::string>(v)) {
      const auto& s = std::get<std::string>(v);
      return sq_->bind_text(stmt, index, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    }
    return sq_->bind_null(stmt, index);
  }

  Value column(sqlite3_stmt* stmt, int c) {
    switch (sq_->column_type(stmt, c)) {
      case SQLITE_INTEGER: return std::int64_t{sq_->column_int64(stmt, c)};
      case SQLITE_FLOAT: return sq_->column_double(stmt, c);
      case SQLITE_NULL: return std::monostate{};
      default: {
        const auto* text = reinterpret_cast<const char*>(sq_->column_text(stmt, c));
        return std::string(text, static_cast<std::size_t>(sq_->column_bytes(stmt, c)));
      }
    }
  }

  Error failure(const char* doing) const {
    // A constraint is the caller's business (a duplicate key); anything else is the database's.
    const int code = sq_->extended_errcode(db_);
    return Error{(code & 0xff) == SQLITE_CONSTRAINT ? ErrorCode::kInvalidArgument : ErrorCode::kIo,
                 fmt::format("{}: {} a statement: {}", describe(), doing, sq_->errmsg(db_))};
  }

  const LibSqlite* sq_;
  sqlite3* db_;
  fs::path path_;
};

}  // namespace

Result<std::unique_ptr<Database>> open_sqlite(const std::string& path_text, OpenMode mode) {
  if (path_text.empty()) return Error{ErrorCode::kInvalidArgument, "sqlite: needs a file path (sqlite:PATH)"};
  auto loaded = libsqlite();
  if (!loaded) return loaded.error();
  const LibSqlite* sq = *loaded;
  const fs::path path = fs::absolute(path_text);
  const std::string shown = mask_secrets(path.string());
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (exists) RUNG_RETURN_IF_ERROR(check_regular_file(path, shown));  // SQLite would fail on a FIFO with "disk I/O error"
  if (mode == OpenMode::kExistingOnly && !exists) {
    return Error{ErrorCode::kNotFound,
                 fmt::format("{}: does not exist (nothing was created: `rung registry add` or `import` makes one)", shown)};
  }
  if (!exists && !path.parent_path().empty()) fs::create_directories(path.parent_path(), ec);
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (mode == OpenMode::kCreateIfMissing ? SQLITE_OPEN_CREATE : 0);
  const int rc = sq->open_v2(path.c_str(), &raw, flags, nullptr);
  auto db = std::make_unique<SqliteDatabase>(sq, raw, path);  // closes `raw` even when opening failed
  if (rc != SQLITE_OK) {
    return Error{ErrorCode::kIo, fmt::format("cannot open the registry {}: {}", shown, raw ? sq->errmsg(raw) : sq->errstr(rc))};
  }
  sq->busy_timeout(raw, kBusyTimeoutMs);
  // A file that is not a database fails here, on its first read.
  if (auto s = db->execute_script("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;"); !s) {
    return malformed_input(shown, "a registry", sq->errmsg(raw));
  }
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace rung::registry
