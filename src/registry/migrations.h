// The registry's schema, kept as versioned SQL: one file per version and
// backend under src/registry/migrations/<backend>/NNNN_name.sql, compiled in.
#pragma once

#include <vector>

#include "registry/database.h"

namespace rung::registry {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

// In version order.
std::vector<Migration> migrations_for(Backend backend);

// Applies the migrations the database lacks, in one transaction that holds the
// write lock (an advisory lock on PostgreSQL), so two processes opening a new
// registry at once apply each migration once. A registry with a newer schema
// than this rung knows is refused.
Status migrate(Database& db);

}  // namespace rung::registry
