// The registry on PostgreSQL (libpq): a server that many machines share.
// Values travel as text both ways; `?` placeholders become `$1`, `$2`, ...
// libpq is loaded when a postgresql:// registry is opened, not linked: its
// header gives the types, the loaded library the functions (os/system_library.h).
#include <fmt/format.h>
#include <libpq-fe.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <vector>

#include "os/system_library.h"
#include "os/environment.h"
#include "registry/database.h"
#include "rung/printable.h"

namespace rung::registry {
namespace {

constexpr long kMaxStatementTimeoutSeconds = 24 * 3600;

// Type OIDs of the columns the registry reads (pg_type.h is a server header).
constexpr Oid kBool = 16, kInt8 = 20, kInt2 = 21, kInt4 = 23, kFloat4 = 700, kFloat8 = 701, kNumeric = 1700;

// The libpq functions the registry calls, each typed by libpq's own declaration.
struct LibPq {
  decltype(&::PQconnectdbParams) connectdb_params;
  decltype(&::PQstatus) status;
  decltype(&::PQerrorMessage) error_message;
  decltype(&::PQsetNoticeProcessor) set_notice_processor;
  decltype(&::PQfinish) finish;
  decltype(&::PQtransactionStatus) transaction_status;
  decltype(&::PQexec) exec;
  decltype(&::PQexecParams) exec_params;
  decltype(&::PQresultStatus) result_status;
  decltype(&::PQresultErrorMessage) result_error_message;
  decltype(&::PQresultErrorField) result_error_field;
  decltype(&::PQclear) clear;
  decltype(&::PQntuples) ntuples;
  decltype(&::PQnfields) nfields;
  decltype(&::PQftype) ftype;
  decltype(&::PQgetisnull) getisnull;
  decltype(&::PQgetvalue) getvalue;
  decltype(&::PQgetlength) getlength;
};

// Loaded once per process; the same answer (the table, or why not) every time.
Result<const LibPq*> libpq() {
  return bind_system_library<LibPq>(SystemLibrary::kPostgresClient, "PostgreSQL's client library (Debian's package libpq5 provides it)",
                                    [](SymbolBinder& bind, LibPq& pq) {
                                      bind("PQconnectdbParams", pq.connectdb_params);
                                      bind("PQstatus", pq.status);
                                      bind("PQerrorMessage", pq.error_message);
                                      bind("PQsetNoticeProcessor", pq.set_notice_processor);
                                      bind("PQfinish", pq.finish);
                                      bind("PQtransactionStatus", pq.transaction_status);
                                      bind("PQexec", pq.exec);
                                      bind("PQexecParams", pq.exec_params);
                                      bind("PQresultStatus", pq.result_status);
                                      bind("PQresultErrorMessage", pq.result_error_message);
                                      bind("PQresultErrorField", pq.result_error_field);
                                      bind("PQclear", pq.clear);
                                      bind("PQntuples", pq.ntuples);
                                      bind("PQnfields", pq.nfields);
                                      bind("PQftype", pq.ftype);
                                      bind("PQgetisnull", pq.getisnull);
                                      bind("PQgetvalue", pq.getvalue);
                                      bind("PQgetlength", pq.getlength);
                                    });
}

// "? ... ?" to "$1 ... $2", leaving quoted text alone.
std::string numbered_placeholders(std::string_view sql) {
  std::string out;
  int n = 0;
  bool quoted = false;
  for (char c : sql) {
    if (c == '\'') quoted = !quoted;
    if (c == '?' && !quoted) {
      out += fmt::format("${}", ++n);
    } else {
      out += c;
    }
  }
  return out;
}

class PostgresDatabase final : public Database {
 public:
  PostgresDatabase(const LibPq& pq, PGconn* conn, std::string url) : pq_(pq), conn_(conn), url_(std::move(url)) {}
  ~PostgresDatabase() override { pq_.finish(conn_); }
  PostgresDatabase(const PostgresDatabase&) = delete;
  PostgresDatabase& operator=(const PostgresDatabase&) = delete;

  Backend backend() const override { return Backend::kPostgresql; }
  std::string describe() const override { return fmt::format("PostgreSQL {}", mask_secrets(url_)); }

  Result<std::vector<Row>> query(std::string_view sql, const std::vector<Value>& params) override {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (is_null(params[i])) continue;
      texts[i] = std::holds_alternative<double>(params[i]) ? fmt::format("{:.17g}", std::get<double>(params[i])) : as_text(params[i]);
      values[i] = texts[i].c_str();
    }
    const std::string text = numbered_placeholders(sql);
    Owned r{pq_, pq_.exec_params(conn_, text.c_str(), static_cast<int>(params.size()), nullptr, values.data(), nullptr, nullptr, 0)};
    const auto status = pq_.result_status(r.get());
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) return failure(r.get());
    std::vector<Row> rows;
    const int columns = pq_.nfields(r.get());
    for (int i = 0, n = pq_.ntuples(r.get()); i < n; ++i) {
      Row row;
      for (int c = 0; c < columns; ++c) row.push_back(cell(r.get(), i, c));
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Status execute_script(std::string_view sql) override {
    Owned r{pq_, pq_.exec(conn_, std::string(sql).c_str())};
    const auto status = pq_.result_status(r.get());
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) return failure(r.get());
    return {};
  }

  Status begin_write() override { return execute_script("BEGIN"); }
  Status begin_read() override { return execute_script("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); }
  Status commit() override { return execute_script("COMMIT"); }
  void rollback() override {
    if (pq_.transaction_status(conn_) != PQTRANS_IDLE) (void)execute_script("ROLLBACK");
  }

 private:
  struct Owned {
    const LibPq& pq;
    PGresult* result;
    ~Owned() { pq.clear(result); }
    PGresult* get() const { return result; }
  };

  Value cell(PGresult* r, int row, int c) {
    if (pq_.getisnull(r, row, c)) return std::monostate{};
    const char* text = pq_.getvalue(r, row, c);
    switch (pq_.ftype(r, c)) {
      case kInt2:
      case kInt4:
      case kInt8: return std::int64_t{std::strtoll(text, nullptr, 10)};
      case kFloat4:
      case kFloat8:
      case kNumeric: return std::strtod(text, nullptr);
      case kBool: return std::int64_t{text[0] == 't'};
      default: return std::string(text, static_cast<std::size_t>(pq_.getlength(r, row, c)));
    }
  }

  bool last_failure_transient() const override { return transient_; }

  Error failure(PGresult* r) {
    // SQLSTATE class 23 is an integrity constraint (a duplicate key): the caller's business.
    // 40001 and 40P01: this transaction lost a race to another writer and may simply run again.
    const char* state = r ? pq_.result_error_field(r, PG_DIAG_SQLSTATE) : nullptr;
    const std::string code = state ? state : "";
    const bool constraint = code.starts_with("23");
    transient_ = code == "40001" || code == "40P01";
    std::string message = r ? pq_.result_error_message(r) : pq_.error_message(conn_);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    return Error{constraint ? ErrorCode::kInvalidArgument : ErrorCode::kIo, fmt::format("{}: {}", describe(), mask_secrets(message, url_))};
  }

  const LibPq& pq_;
  PGconn* conn_;
  std::string url_;
  bool transient_ = false;
};

void ignore_notice(void*, const char*) {}

}  // namespace

Result<std::unique_ptr<Database>> open_postgresql(const std::string& url) {
  // The statement limit is read first: a bad value is refused before any connection is tried.
  std::optional<int> statement_timeout;
  if (const auto variable = rung_variable("RUNG_REGISTRY_STATEMENT_TIMEOUT", /*allowed=*/true)) {  // the registry is the CLI's
    const char* env = variable->c_str();
    char* end = nullptr;
    errno = 0;
    const long seconds = std::strtol(env, &end, 10);
    if (errno != 0 || end == env || *end != '\0' || seconds < 0 || seconds > kMaxStatementTimeoutSeconds) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("RUNG_REGISTRY_STATEMENT_TIMEOUT={}: give whole seconds from 0 (no limit) to {}",
                                                            printable(env, 40), kMaxStatementTimeoutSeconds)};
    }
    statement_timeout = static_cast<int>(seconds);
  }
  auto loaded = libpq();
  if (!loaded) return Error{loaded.error().code, fmt::format("cannot open the registry {}: {}", mask_secrets(url), loaded.error().message)};
  const LibPq& pq = **loaded;
  // A server that accepts the connection and never answers must not hold rung forever: a
  // connect timeout unless the URL or PGCONNECT_TIMEOUT sets one. Keywords before the
  // expanded URL are overridden by the URL's own.
  const std::string connect_timeout = std::to_string(kPostgresConnectTimeoutSeconds);
  const bool default_timeout = !system_variable("PGCONNECT_TIMEOUT");
  std::vector<const char*> keys, values;
  if (default_timeout) {
    keys.push_back("connect_timeout");
    values.push_back(connect_timeout.c_str());
  }
  keys.push_back("dbname");
  values.push_back(url.c_str());
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = pq.connectdb_params(keys.data(), values.data(), 1);
  auto db = std::make_unique<PostgresDatabase>(pq, conn, url);  // finishes `conn` whatever happens
  if (conn == nullptr || pq.status(conn) != CONNECTION_OK) {
    std::string why = conn ? pq.error_message(conn) : "out of memory";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    if (why.find("timeout expired") != std::string::npos) {
      why += " (the server did not answer in time: connect_timeout=SECONDS in the URL, or PGCONNECT_TIMEOUT, sets how long to wait)";
    }
    return Error{ErrorCode::kIo, fmt::format("cannot connect to the registry {}: {}", mask_secrets(url), mask_secrets(why, url))};
  }
  // Notices ("relation already exists, skipping") are for people at psql, not rung's output.
  pq.set_notice_processor(conn, ignore_notice, nullptr);
  // A statement that runs away is cancelled by the server: RUNG_REGISTRY_STATEMENT_TIMEOUT, else the
  // connection's own setting (the URL's options, PGOPTIONS, the server's), else rung's default.
  const std::string set =
      statement_timeout ? fmt::format("SELECT set_config('statement_timeout', '{}', false)", *statement_timeout * 1000)
                        : fmt::format("SELECT set_config('statement_timeout', CASE current_setting('statement_timeout') WHEN '0' THEN '{}' "
                                      "ELSE current_setting('statement_timeout') END, false)",
                                      kPostgresStatementTimeoutSeconds * 1000);
  RUNG_RETURN_IF_ERROR(db->query(set, {}));
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace rung::registry
