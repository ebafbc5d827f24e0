-- The fleet view, kept up to date as measurements arrive: per model, device,
-- runtime and rung, how many measurements there are and which is the latest
-- (the one shown). Reading it is one ordered scan, however many were imported.
-- The SQLite twin of this file is ../sqlite/0002_fleet.sql: keep them in step.

CREATE TABLE fleet (
  model_name TEXT NOT NULL,
  model_sha256 TEXT NOT NULL,
  device TEXT NOT NULL,
  runtime_version TEXT NOT NULL,
  rung TEXT NOT NULL,
  measurements INTEGER NOT NULL,
  measured_at TEXT NOT NULL,            -- of the latest
  latest_id BIGINT NOT NULL REFERENCES measurements (id),
  PRIMARY KEY (model_name, model_sha256, device, runtime_version, rung)
);

INSERT INTO fleet (model_name, model_sha256, device, runtime_version, rung, measurements, measured_at, latest_id)
SELECT model_name, model_sha256, device, runtime_version, rung, n, measured_at, id FROM (
  SELECT model_name, model_sha256, device, runtime_version, rung, measured_at, id,
         ROW_NUMBER() OVER (PARTITION BY model_name, model_sha256, device, runtime_version, rung ORDER BY measured_at DESC, id DESC) AS pick,
         COUNT(*) OVER (PARTITION BY model_name, model_sha256, device, runtime_version, rung) AS n
  FROM measurements) ranked
WHERE pick = 1;
