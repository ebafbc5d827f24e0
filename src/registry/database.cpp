#include "registry/database.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "registry/migrations.h"

namespace rung::registry {
namespace fs = std::filesystem;

bool is_null(const Value& v) { return std::holds_alternative<std::monostate>(v); }

std::int64_t as_int(const Value& v) {
  if (std::holds_alternative<std::int64_t>(v)) return std::get<std::int64_t>(v);
  if (std::holds_alternative<double>(v)) return static_cast<std::int64_t>(std::get<double>(v));
  if (std::holds_alternative<std::string>(v)) return std::strtoll(std::get<std::string>(v).c_str(), nullptr, 10);
  return 0;
}

double as_real(const Value& v) {
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  if (std::holds_alternative<std::int64_t>(v)) return static_cast<double>(std::get<std::int64_t>(v));
  if (std::holds_alternative<std::string>(v)) return std::strtod(std::get<std::string>(v).c_str(), nullptr);
  return 0;
}

std::string as_text(const Value& v) {
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  if (std::holds_alternative<std::int64_t>(v)) return std::to_string(std::get<std::int64_t>(v));
  if (std::holds_alternative<double>(v)) return fmt::format("{}", std::get<double>(v));
  return {};
}

Value text_or_null(const std::string& s) { return s.empty() ? Value{} : Value{s}; }

Result<std::unique_ptr<Database>> open_database(const std::string& url) {
  if (url.empty()) return Error{ErrorCode::kInvalidArgument, "the registry URL is empty"};
  Result<std::unique_ptr<Database>> db = url.starts_with("postgresql://") || url.starts_with("postgres://") ? open_postgresql(url)
                                         : url.starts_with("sqlite:")                                      ? open_sqlite(url.substr(7))
                                         : url.find("://") != std::string::npos
                                             ? Result<std::unique_ptr<Database>>(Error{
                                                   ErrorCode::kInvalidArgument,
                                                   fmt::format("{}: a registry is a file path, sqlite:PATH or postgresql://...", url)})
                                             : open_sqlite(url);
  if (!db) return db;
  if (auto s = migrate(**db); !s) return s.error();
  return db;
}

std::string default_registry_url() {
  if (const char* env = std::getenv("RUNG_REGISTRY"); env != nullptr && *env) return env;
  fs::path data;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg == '/') {
    data = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home) {
    data = fs::path(home) / ".local" / "share";
  } else {
    data = fs::temp_directory_path();
  }
  return "sqlite:" + (data / "rung" / "registry.sqlite").string();
}

namespace {

Status in_transaction(Database& db, Status begun, const std::function<Status()>& body) {
  if (!begun) return begun;
  Status s = body();
  if (s) s = db.commit();
  if (!s) db.rollback();
  return s;
}

}  // namespace

Status in_write_transaction(Database& db, const std::function<Status()>& body) {
  constexpr int kAttempts = 5;
  Status s;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    s = in_transaction(db, db.begin_write(), body);
    if (s || !db.last_failure_transient()) break;
  }
  return s;
}
Status in_read_transaction(Database& db, const std::function<Status()>& body) { return in_transaction(db, db.begin_read(), body); }

}  // namespace rung::registry
