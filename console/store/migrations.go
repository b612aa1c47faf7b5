package store

// builtinMigrations is the console's schema history, gathered from the files
// that own each area. Append new versions; never edit one that has shipped.
// Versions 1–9 are accounts and streams, 10–19 plugins, 20–29 harness
// versions and releases, 30–39 training runs and evaluations, 40–49 live
// sessions; 50–59 belong to console/experiment (through WithMigrations);
// 60–69 are the merchants' rehearsals.
func builtinMigrations() []Migration {
	var ms []Migration
	for _, area := range [][]Migration{
		accountMigrations(), pluginMigrations(), harnessMigrations(), runMigrations(), liveMigrations(),
		rehearsalMigrations(),
	} {
		ms = append(ms, area...)
	}
	return ms
}

// accountMigrations are the organisations, users, sessions, merchants, their
// streams and catalogs.
func accountMigrations() []Migration {
	return []Migration{
		{Version: 1, Name: "accounts and streams", SQL: []string{
			`CREATE TABLE orgs (
				id TEXT PRIMARY KEY,
				name TEXT NOT NULL,
				created_at TEXT NOT NULL)`,
			`CREATE TABLE merchants (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				name TEXT NOT NULL,
				created_at TEXT NOT NULL)`,
			`CREATE INDEX merchants_org ON merchants(org_id)`,
			`CREATE TABLE users (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				username TEXT NOT NULL UNIQUE,
				display_name TEXT NOT NULL,
				role TEXT NOT NULL CHECK (role IN ('operator', 'merchant', 'developer')),
				merchant_id TEXT REFERENCES merchants(id),
				password_hash TEXT NOT NULL,
				created_at TEXT NOT NULL,
				CHECK ((role = 'merchant') = (merchant_id IS NOT NULL)))`,
			`CREATE TABLE sessions (
				token_hash TEXT PRIMARY KEY,
				user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
				csrf TEXT NOT NULL,
				created_at TEXT NOT NULL,
				expires_at TEXT NOT NULL)`,
			`CREATE TABLE api_tokens (
				id TEXT PRIMARY KEY,
				user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
				name TEXT NOT NULL,
				token_hash TEXT NOT NULL UNIQUE,
				created_at TEXT NOT NULL,
				last_used_at TEXT)`,
			`CREATE TABLE streams (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				merchant_id TEXT NOT NULL REFERENCES merchants(id),
				name TEXT NOT NULL,
				persona TEXT NOT NULL DEFAULT '',
				strategy TEXT NOT NULL DEFAULT '{}',
				catalog TEXT NOT NULL DEFAULT '{}',
				banned_claims TEXT NOT NULL DEFAULT '[]',
				currency TEXT NOT NULL DEFAULT 'CNY',
				harness_version TEXT NOT NULL DEFAULT '',
				on_air INTEGER NOT NULL DEFAULT 0,
				revision INTEGER NOT NULL DEFAULT 1,
				created_at TEXT NOT NULL,
				updated_at TEXT NOT NULL)`,
			`CREATE INDEX streams_merchant ON streams(org_id, merchant_id)`,
		}},
		// The catalog editor saves the catalog alone; its own revision lets
		// a catalog save and a stream settings save made at the same time
		// both be checked against what each editor loaded.
		{Version: 2, Name: "catalog revision", SQL: []string{
			`ALTER TABLE streams ADD COLUMN catalog_revision INTEGER NOT NULL DEFAULT 1`,
		}},
	}
}
