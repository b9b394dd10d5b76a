-- 0014_version_revisions: a development version (MAJOR 0) may be replaced
-- in place (spec/versioning.md §8). workflow_versions keeps the current
-- revision of each version (1 for every version stored before); every
-- graph it replaced is kept in version_revisions, so a run bound to an
-- earlier revision still reads the graph it ran (by its graph hash).
ALTER TABLE workflow_versions ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
DROP INDEX workflow_versions_semver;
CREATE INDEX workflow_versions_semver ON workflow_versions (workflow, major, minor, patch, version, hash, created_at, revision);

CREATE TABLE version_revisions (
    workflow   TEXT    NOT NULL,
    version    TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    major      INTEGER NOT NULL,
    minor      INTEGER NOT NULL,
    patch      INTEGER NOT NULL,
    hash       TEXT    NOT NULL,
    graph      BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    steps      INTEGER,
    PRIMARY KEY (workflow, version, revision)
);
CREATE INDEX version_revisions_hash ON version_revisions (workflow, hash);
