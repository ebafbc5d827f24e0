#include "registry/database.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "registry/migrations.h"
#include "os/environment.h"
#include "rung/user_dirs.h"

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

namespace {

// "host=db dbname=rung password=...": a libpq connection string where a registry URL or path goes.
// Taken as a path it would become a SQLite file named by its words, password and all.
bool looks_like_conninfo(const std::string& text) {
  for (const char* key : {"host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "service", "connect_timeout"}) {
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      std::size_t end = at + std::strlen(key);
      while (end < text.size() && text[end] == ' ') ++end;
      if ((at == 0 || std::isspace(static_cast<unsigned char>(text[at - 1]))) && end < text.size() && text[end] == '=') return true;
    }
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<Database>> open_database(const std::string& url, OpenMode mode) {
  if (url.empty()) return Error{ErrorCode::kInvalidArgument, "the registry URL is empty"};
  if (url.find("://") == std::string::npos && !url.starts_with("sqlite:") && looks_like_conninfo(url)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("'{}' is a key=value connection string: give a PostgreSQL registry as "
                                                          "postgresql://[user@]host/database (a file path or sqlite:PATH for SQLite)",
                                                          mask_secrets(url))};
  }
  Result<std::unique_ptr<Database>> db = url.starts_with("postgresql://") || url.starts_with("postgres://") ? open_postgresql(url)
                                         : url.starts_with("sqlite:")                                      ? open_sqlite(url.substr(7), mode)
                                         : url.find("://") != std::string::npos
                                             ? Result<std::unique_ptr<Database>>(Error{
                                                   ErrorCode::kInvalidArgument,
                                                   fmt::format("{}: a registry is a file path, sqlite:PATH or postgresql://...", mask_secrets(url))})
                                             : open_sqlite(url, mode);
  if (!db) return db;
  if (mode == OpenMode::kExistingOnly) {
    // A database that is there but holds no registry is not made into one by a command that only reads.
    const char* probe = (*db)->backend() == Backend::kSqlite
                            ? "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
                            : "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = 'schema_migrations' AND schemaname = ANY (current_schemas(false))";
    auto found = (*db)->query(probe);
    if (!found) return found.error();
    if (found->empty() || as_int(found->front().front()) == 0) {
      return Error{ErrorCode::kNotFound, fmt::format("{} holds no registry (nothing was created: `rung registry add` or `import` makes one)",
                                                     (*db)->describe())};
    }
  }
  RUNG_RETURN_IF_ERROR(migrate(**db));
  return db;
}

namespace {

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && is_hex(s[i + 1]) && is_hex(s[i + 2])) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string lowercase_decoded(std::string_view s) {
  std::string k = percent_decoded(s);
  for (auto& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k;
}

bool is_secret_key(std::string_view key) { return lowercase_decoded(key).ends_with("password"); }

// A value that itself carries a password (`options=-c%20password%3Dx`, `application_name=password=x`) is a
// secret whole: the client reads the inner setting, so the printer must not show it.
bool holds_secret(std::string_view value) { return lowercase_decoded(value).find("password") != std::string::npos; }

bool is_word_byte(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || (c & 0x80) != 0; }

// `secret` at `at` in `text` stands alone: a short password ("p") is masked where it is quoted, never inside
// other words ("port", "expired"), which would show the reader which letters it is made of.
bool stands_alone(std::string_view text, std::size_t at, std::size_t size) {
  const bool left = at == 0 || !is_word_byte(text[at - 1]) || !is_word_byte(text[at]);
  const bool right = at + size >= text.size() || !is_word_byte(text[at + size]) || !is_word_byte(text[at + size - 1]);
  return left && right;
}

// Where each secret's text lies in `text`: [begin, end) ranges.
std::vector<std::pair<std::size_t, std::size_t>> secret_spans(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  // user:password@host — the authority runs from "://" to the first '/', '?', '#' or space.
  for (std::size_t at = text.find("://"); at != std::string_view::npos; at = text.find("://", at + 3)) {
    const std::size_t start = at + 3;
    std::size_t end = start;
    while (end < text.size() && std::string_view("/?# \t\r\n\"'").find(text[end]) == std::string_view::npos) ++end;
    const std::string_view authority = text.substr(start, end - start);
    const auto userinfo_end = authority.rfind('@');
    if (userinfo_end == std::string_view::npos) continue;
    const auto colon = authority.find(':');
    if (colon < userinfo_end) spans.emplace_back(start + colon + 1, start + userinfo_end);
  }
  // KEY=VALUE where KEY ends in "password": a URL's query (&-separated) or a connection string ('quoted' or bare).
  for (std::size_t eq = text.find('='); eq != std::string_view::npos; eq = text.find('=', eq + 1)) {
    std::size_t key_end = eq;
    while (key_end > 0 && (text[key_end - 1] == ' ' || text[key_end - 1] == '\t')) --key_end;
    std::size_t key_start = key_end;
    while (key_start > 0 && std::string_view("?&;/ \t\r\n\"'=").find(text[key_start - 1]) == std::string_view::npos) --key_start;
    if (key_start == key_end) continue;
    const bool secret_key = is_secret_key(text.substr(key_start, key_end - key_start));
    std::size_t v = eq + 1;
    while (v < text.size() && (text[v] == ' ' || text[v] == '\t')) ++v;
    std::size_t end = v;
    if (v < text.size() && text[v] == '\'') {
      for (end = v + 1; end < text.size() && text[end] != '\''; ++end) {
        if (text[end] == '\\') ++end;
      }
      end = std::min(text.size(), end + 1);
    } else {
      while (end < text.size() && std::string_view("& \t\r\n#\"").find(text[end]) == std::string_view::npos) ++end;
    }
    if (end > v && (secret_key || holds_secret(text.substr(v, end - v)))) spans.emplace_back(v, end);
  }
  return spans;
}

}  // namespace

std::string mask_secrets(std::string_view text, std::string_view url) {
  auto spans = secret_spans(text);
  std::sort(spans.begin(), spans.end());
  std::string out;
  std::size_t done = 0;
  for (const auto& [begin, end] : spans) {
    if (begin < done) continue;  // overlapping: already masked
    out.append(text.substr(done, begin - done));
    out += "***";
    done = end;
  }
  out.append(text.substr(done));
  if (url.empty()) return out;
  // The URL's secrets as they were written and as the client decoded them, wherever else they appear.
  std::vector<std::string> secrets;
  for (const auto& [begin, end] : secret_spans(url)) {
    std::string_view raw = url.substr(begin, end - begin);
    if (raw.size() >= 2 && raw.front() == '\'' && raw.back() == '\'') raw = raw.substr(1, raw.size() - 2);
    secrets.emplace_back(raw);
    secrets.push_back(percent_decoded(raw));
  }
  std::sort(secrets.begin(), secrets.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const auto& secret : secrets) {
    if (secret.empty() || secret == "***") continue;
    for (std::size_t at = out.find(secret); at != std::string::npos; at = out.find(secret, at)) {
      if (!stands_alone(out, at, secret.size())) {
        ++at;
        continue;
      }
      out.replace(at, secret.size(), "***");
      at += 3;
    }
  }
  return out;
}

Result<std::string> default_registry_url() {
  if (auto env = rung_variable("RUNG_REGISTRY", /*allowed=*/true)) return *env;  // the registry is the CLI's
  auto data = user_data_dir();
  if (!data) return Error{data.error().code, fmt::format("no registry: {} (or RUNG_REGISTRY, or --registry)", data.error().message)};
  return "sqlite:" + (*data / "registry.sqlite").string();
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
