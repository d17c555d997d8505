package approval

import (
	"context"
	"database/sql"
	"fmt"
)

// migration is one schema step, in each database's SQL. The two are the
// same schema: the same tables, columns, constraints and indexes, so that
// the lifecycle's queries mean the same on both.
type migration struct {
	sqlite, postgres string
}

// migrations are the schema steps, in order; a database's schema version is
// the number applied (SQLite: PRAGMA user_version; PostgreSQL: the rows of
// approval_schema). Steps are append-only: a released step is never edited,
// a change is a new step, for both databases at once.
var migrations = []migration{
	// 1: approvals and their audit trail.
	{sqlite: `
CREATE TABLE approvals (
	n                INTEGER PRIMARY KEY AUTOINCREMENT, -- insertion order: newest first
	id               TEXT    NOT NULL UNIQUE,
	idempotency_key  TEXT    NOT NULL,
	state            TEXT    NOT NULL CHECK (state IN ('pending','approved','rejected','expired','canceled','claimed','completed')),
	tool             TEXT    NOT NULL,
	binding_id       TEXT    NOT NULL,
	binding_revision TEXT    NOT NULL,
	scope_id         TEXT    NOT NULL,
	scope_revision   TEXT    NOT NULL,
	effect           TEXT    NOT NULL CHECK (effect IN ('write','destructive')),
	principal_id     TEXT    NOT NULL,
	principal_issuer TEXT    NOT NULL,
	arguments        BLOB    NOT NULL,
	arguments_digest TEXT    NOT NULL,
	summary          TEXT    NOT NULL,
	created_at       INTEGER NOT NULL, -- unix nanoseconds, UTC; 0 = unset
	expires_at       INTEGER NOT NULL,
	decided_by       TEXT    NOT NULL DEFAULT '',
	decided_at       INTEGER NOT NULL DEFAULT 0,
	note             TEXT    NOT NULL DEFAULT '',
	claimed_at       INTEGER NOT NULL DEFAULT 0,
	receipt_effect   TEXT    CHECK (receipt_effect IN ('not_started','committed','unknown')),
	receipt_code     TEXT    NOT NULL DEFAULT '',
	receipt_result   BLOB,
	receipt_at       INTEGER NOT NULL DEFAULT 0,
	recon_by         TEXT    NOT NULL DEFAULT '',
	recon_effect     TEXT    CHECK (recon_effect IN ('not_started','committed')),
	recon_evidence   TEXT    NOT NULL DEFAULT '',
	recon_at         INTEGER NOT NULL DEFAULT 0,
	CHECK ((state = 'completed') = (receipt_effect IS NOT NULL)),
	CHECK (state NOT IN ('claimed','completed') OR claimed_at <> 0)
);
-- At most one live approval per key: Prepare's idempotency holds even if
-- two processes race (the loser's insert fails instead of duplicating).
CREATE UNIQUE INDEX approvals_live_key ON approvals (idempotency_key)
	WHERE state NOT IN ('expired','canceled');
CREATE INDEX approvals_key ON approvals (idempotency_key, n);
CREATE INDEX approvals_state ON approvals (state, n);
CREATE INDEX approvals_due ON approvals (expires_at) WHERE state IN ('pending','approved');

CREATE TABLE events (
	approval_id TEXT    NOT NULL REFERENCES approvals (id),
	seq         INTEGER NOT NULL,
	at          INTEGER NOT NULL,
	kind        TEXT    NOT NULL,
	actor       TEXT    NOT NULL,
	detail      TEXT    NOT NULL,
	PRIMARY KEY (approval_id, seq)
);
`, postgres: `
CREATE TABLE approvals (
	n                BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- insertion order: newest first
	id               TEXT    NOT NULL UNIQUE,
	idempotency_key  TEXT    NOT NULL,
	state            TEXT    NOT NULL CHECK (state IN ('pending','approved','rejected','expired','canceled','claimed','completed')),
	tool             TEXT    NOT NULL,
	binding_id       TEXT    NOT NULL,
	binding_revision TEXT    NOT NULL,
	scope_id         TEXT    NOT NULL,
	scope_revision   TEXT    NOT NULL,
	effect           TEXT    NOT NULL CHECK (effect IN ('write','destructive')),
	principal_id     TEXT    NOT NULL,
	principal_issuer TEXT    NOT NULL,
	arguments        BYTEA   NOT NULL,
	arguments_digest TEXT    NOT NULL,
	summary          TEXT    NOT NULL,
	created_at       BIGINT  NOT NULL, -- unix nanoseconds, UTC; 0 = unset
	expires_at       BIGINT  NOT NULL,
	decided_by       TEXT    NOT NULL DEFAULT '',
	decided_at       BIGINT  NOT NULL DEFAULT 0,
	note             TEXT    NOT NULL DEFAULT '',
	claimed_at       BIGINT  NOT NULL DEFAULT 0,
	receipt_effect   TEXT    CHECK (receipt_effect IN ('not_started','committed','unknown')),
	receipt_code     TEXT    NOT NULL DEFAULT '',
	receipt_result   BYTEA,
	receipt_at       BIGINT  NOT NULL DEFAULT 0,
	recon_by         TEXT    NOT NULL DEFAULT '',
	recon_effect     TEXT    CHECK (recon_effect IN ('not_started','committed')),
	recon_evidence   TEXT    NOT NULL DEFAULT '',
	recon_at         BIGINT  NOT NULL DEFAULT 0,
	CHECK ((state = 'completed') = (receipt_effect IS NOT NULL)),
	CHECK (state NOT IN ('claimed','completed') OR claimed_at <> 0)
);
CREATE UNIQUE INDEX approvals_live_key ON approvals (idempotency_key)
	WHERE state NOT IN ('expired','canceled');
CREATE INDEX approvals_key ON approvals (idempotency_key, n);
CREATE INDEX approvals_state ON approvals (state, n);
CREATE INDEX approvals_due ON approvals (expires_at) WHERE state IN ('pending','approved');

CREATE TABLE events (
	approval_id TEXT    NOT NULL REFERENCES approvals (id),
	seq         INTEGER NOT NULL,
	at          BIGINT  NOT NULL,
	kind        TEXT    NOT NULL,
	actor       TEXT    NOT NULL,
	detail      TEXT    NOT NULL,
	PRIMARY KEY (approval_id, seq)
);
`},
	// 2: what approvers read about the tool (its description and server),
	// and the approval inbox's sign-ins, shared by every inbox instance
	// on the store (ADR 0052). A sign-in row holds a digest of the
	// cookie's secret, never the secret.
	{sqlite: `
ALTER TABLE approvals ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN server TEXT NOT NULL DEFAULT '';
CREATE TABLE inbox_signins (
	id_hash         TEXT    PRIMARY KEY,
	approver_id     TEXT    NOT NULL,
	approver_issuer TEXT    NOT NULL,
	scopes          TEXT    NOT NULL, -- a JSON array of strings
	created_at      INTEGER NOT NULL,
	expires_at      INTEGER NOT NULL
);
CREATE INDEX inbox_signins_expiry ON inbox_signins (expires_at);
`, postgres: `
ALTER TABLE approvals ADD COLUMN description TEXT NOT NULL DEFAULT '',
	ADD COLUMN server TEXT NOT NULL DEFAULT '';
CREATE TABLE inbox_signins (
	id_hash         TEXT    PRIMARY KEY,
	approver_id     TEXT    NOT NULL,
	approver_issuer TEXT    NOT NULL,
	scopes          TEXT    NOT NULL,
	created_at      BIGINT  NOT NULL,
	expires_at      BIGINT  NOT NULL
);
CREATE INDEX inbox_signins_expiry ON inbox_signins (expires_at);
`},
	// 3: whose credential a write reaches its server with, for approvers
	// to read (Intent.Credential), and the grants a gateway keeps for the
	// people it acts for at third parties, sealed (Connection; issue 40).
	{sqlite: `
ALTER TABLE approvals ADD COLUMN credential TEXT NOT NULL DEFAULT '';
CREATE TABLE connections (
	principal_id     TEXT    NOT NULL,
	principal_issuer TEXT    NOT NULL,
	upstream         TEXT    NOT NULL,
	client_id        TEXT    NOT NULL, -- the MCP client the person allowed
	scopes           TEXT    NOT NULL,
	sealed           BLOB    NOT NULL, -- encrypted by the gateway; never read here
	created_at       INTEGER NOT NULL,
	updated_at       INTEGER NOT NULL,
	PRIMARY KEY (principal_id, principal_issuer, upstream, client_id)
);
`, postgres: `
ALTER TABLE approvals ADD COLUMN credential TEXT NOT NULL DEFAULT '';
CREATE TABLE connections (
	principal_id     TEXT    NOT NULL,
	principal_issuer TEXT    NOT NULL,
	upstream         TEXT    NOT NULL,
	client_id        TEXT    NOT NULL,
	scopes           TEXT    NOT NULL,
	sealed           BYTEA   NOT NULL,
	created_at       BIGINT  NOT NULL,
	updated_at       BIGINT  NOT NULL,
	PRIMARY KEY (principal_id, principal_issuer, upstream, client_id)
);
`},
}

// SchemaVersion is the schema version this build writes and understands,
// on SQLite (PRAGMA user_version) and on PostgreSQL (table approval_schema)
// alike. OpenSQLite and OpenPostgres refuse a database with a higher one;
// OpenPostgres also one with a lower one.
const SchemaVersion = 3

// migrate brings the SQLite database to SchemaVersion in one transaction, or
// refuses a database written by a newer build.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: one migrator at a time
	if err != nil {
		return fmt.Errorf("approval: migrate: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("approval: migrate: read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("approval: database schema version %d is newer than this build understands (%d): use a newer agnara build, or another database file", v, len(migrations))
	}
	if v == len(migrations) {
		return nil
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i].sqlite); err != nil {
			return fmt.Errorf("approval: migrate to schema version %d: %w", i+1, err)
		}
	}
	// PRAGMA takes no parameters; the value is an int we own.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return fmt.Errorf("approval: migrate: set schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("approval: migrate: commit: %w", err)
	}
	return nil
}
