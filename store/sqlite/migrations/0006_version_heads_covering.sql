-- 0006_version_heads_covering: binding a run to its version (at every
-- claim) lists the workflow's versions without their graphs. created_at
-- is stored after the graph, so reading it from the row walked the
-- overflow pages of the whole graph (megabytes for a long workflow; ~5 ms
-- a claim for a 10,000-step one). The semver index now holds every
-- column that listing reads.
DROP INDEX workflow_versions_semver;
CREATE INDEX workflow_versions_semver ON workflow_versions (workflow, major, minor, patch, version, hash, created_at);
