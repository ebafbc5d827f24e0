-- Releases, the evidence measured on their targets, and imported bench measurements.
-- The PostgreSQL twin of this file is ../postgresql/0001_releases.sql: keep them in step.

CREATE TABLE releases (
  id INTEGER PRIMARY KEY,
  release_key TEXT NOT NULL UNIQUE,     -- SHA-256 of everything below but the artifact's hashes
  model TEXT NOT NULL,
  version TEXT NOT NULL,
  device_class TEXT NOT NULL,
  rung TEXT NOT NULL,
  artifact_path TEXT NOT NULL,
  artifact_sha256 TEXT NOT NULL,
  artifact_stable_sha256 TEXT,          -- NULL when the artifact is not an ONNX graph
  artifact_size INTEGER NOT NULL,
  retained INTEGER NOT NULL CHECK (retained IN (0, 1)),
  not_retained_reason TEXT,
  recipe TEXT NOT NULL,                 -- JSON object
  runtime_version TEXT NOT NULL,
  device TEXT NOT NULL,
  providers TEXT NOT NULL,              -- JSON object: provider -> version
  cache_sha256 TEXT,
  cache_file TEXT,
  precision_kind TEXT NOT NULL CHECK (precision_kind IN ('not inspected', 'initializers', 'opaque')),
  precision_detail TEXT,              -- JSON counts by element type, or why it is opaque
  registered_at TEXT NOT NULL,
  CHECK (retained = 1 OR not_retained_reason IS NOT NULL)
);
CREATE INDEX releases_by_model ON releases (model, version);

CREATE TABLE evidence (
  id INTEGER PRIMARY KEY,
  release_id INTEGER NOT NULL REFERENCES releases (id),
  kind TEXT NOT NULL CHECK (kind IN ('bench', 'parity')),
  sha256 TEXT NOT NULL,
  summary TEXT NOT NULL,
  document TEXT NOT NULL,
  added_at TEXT NOT NULL,
  UNIQUE (release_id, sha256)
);

-- One row per rung of one bench measurement (one run of one model on one device).
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  digest TEXT NOT NULL,                 -- SHA-256 of the measurement and its model's hash
  model_name TEXT NOT NULL,
  model_sha256 TEXT NOT NULL,
  model_stable_sha256 TEXT,             -- NULL in version-1 records
  device TEXT NOT NULL,
  hostname TEXT NOT NULL,
  runtime_version TEXT NOT NULL,
  measured_at TEXT NOT NULL,
  rung TEXT NOT NULL,
  model_id TEXT NOT NULL,
  ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
  p50_ms REAL,
  output_match TEXT NOT NULL,
  max_abs_diff REAL,
  failure_class TEXT,
  UNIQUE (digest, rung)
);
