-- A release registered although its recipe's gates failed (a `rung quantise --force`
-- report, `rung registry add --gate-failed`): the recipe's decision and failing gates
-- as JSON, {"decision": "forced", "failed": [the failing gates' titles]}; NULL for every
-- other release. Releases registered before this migration are unmarked (NULL).
-- The SQLite twin of this file is ../sqlite/0003_gate_failed.sql: keep them in step.

ALTER TABLE releases ADD COLUMN gate_failed TEXT;
