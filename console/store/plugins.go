package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/livehat/livehat/plugins"
)

// pluginMigrations are this area's tables: plugins (one row per name per
// organisation, with its owner, enabled flag and active version), their
// uploaded versions, and the ed25519 keys an organisation trusts to sign
// them. The package bytes are not here: they are files in the data folder,
// named by the sha256 of the archive (see console/plugin_files.go).
func pluginMigrations() []Migration {
	return []Migration{
		{Version: 10, Name: "plugins, versions and signing keys", SQL: []string{
			`CREATE TABLE plugins (
				id TEXT PRIMARY KEY,
				org_id TEXT NOT NULL REFERENCES orgs(id),
				name TEXT NOT NULL,
				owner_id TEXT NOT NULL REFERENCES users(id),
				enabled INTEGER NOT NULL DEFAULT 1,
				active_version_id TEXT,
				revision INTEGER NOT NULL DEFAULT 1,
				created_at TEXT NOT NULL,
				updated_at TEXT NOT NULL,
				UNIQUE (org_id, name))`,
			`CREATE TABLE plugin_versions (
				id TEXT PRIMARY KEY,
				plugin_id TEXT NOT NULL REFERENCES plugins(id) ON DELETE CASCADE,
				version TEXT NOT NULL,
				sha256 TEXT NOT NULL,
				package_sha256 TEXT NOT NULL,
				manifest TEXT NOT NULL,
				signer TEXT NOT NULL DEFAULT '',
				size INTEGER NOT NULL,
				package_size INTEGER NOT NULL,
				uploaded_by TEXT NOT NULL REFERENCES users(id),
				uploaded_at TEXT NOT NULL,
				UNIQUE (plugin_id, version))`,
			`CREATE TABLE plugin_keys (
				org_id TEXT NOT NULL REFERENCES orgs(id),
				key_id TEXT NOT NULL,
				public_key TEXT NOT NULL,
				added_by TEXT NOT NULL REFERENCES users(id),
				created_at TEXT NOT NULL,
				PRIMARY KEY (org_id, key_id))`,
		}},
	}
}

// Plugin is a plugin of an organisation: a name, its owner and which of
// its uploaded versions is active. Live sessions run the active version of
// every enabled plugin.
type Plugin struct {
	ID        string `json:"id"`
	OrgID     string `json:"org_id"`
	Name      string `json:"name"`
	OwnerID   string `json:"owner_id"`
	OwnerName string `json:"owner"`
	Enabled   bool   `json:"enabled"`
	// Active is the active version; nil only while a plugin has none.
	Active *PluginVersion `json:"active,omitempty"`
	// Revision increases with every change (a new version, enable,
	// disable, activate); a change may name the revision it was based on.
	Revision  int64     `json:"revision"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PluginVersion is one uploaded version of a plugin.
type PluginVersion struct {
	ID       string `json:"id"`
	PluginID string `json:"-"`
	Version  string `json:"version"`
	// SHA256 is the hex sha256 of the WebAssembly module (the manifest's
	// pin); PackageSHA256 that of the .lhp archive, which names its file.
	SHA256        string          `json:"sha256"`
	PackageSHA256 string          `json:"package_sha256"`
	Manifest      json.RawMessage `json:"manifest"`
	// Signer is the id of the trusted key whose signature verified at
	// upload, or "" for an unsigned package.
	Signer         string    `json:"signer"`
	Size           int64     `json:"size"`
	PackageSize    int64     `json:"package_size"`
	UploadedBy     string    `json:"uploaded_by"`
	UploadedByName string    `json:"uploaded_by_name"`
	UploadedAt     time.Time `json:"uploaded_at"`
	Active         bool      `json:"active"`
}

// NewPluginVersion is an uploaded, verified package to record.
type NewPluginVersion struct {
	Name, Version, SHA256, PackageSHA256, Signer string
	Manifest                                     json.RawMessage
	Size, PackageSize                            int64
}

// RuntimePlugin is what the runtime needs of an active version.
type RuntimePlugin struct {
	Name, Version, VersionID, PackageSHA256, Signer string
}

// PluginKey is an ed25519 public key an organisation trusts to sign plugins.
type PluginKey struct {
	KeyID     string    `json:"key_id"`
	PublicKey string    `json:"public_key"` // hex
	AddedBy   string    `json:"added_by"`
	CreatedAt time.Time `json:"created_at"`
}

// pluginFilter limits plugins (aliased p) to what sc sees: operators the
// whole organisation, developers their own, merchants nothing.
const pluginFilter = `p.org_id = ? AND (? = 'operator' OR (? = 'developer' AND p.owner_id = ?))`

func pluginArgs(sc Scope) []any {
	return []any{sc.OrgID, string(sc.Role), string(sc.Role), sc.UserID}
}

const pluginSelect = `SELECT p.id, p.org_id, p.name, p.owner_id, COALESCE(u.display_name, ''), p.enabled, p.revision,
	p.created_at, p.updated_at, ` + versionColumns + `
	FROM plugins p LEFT JOIN users u ON u.id = p.owner_id
	LEFT JOIN plugin_versions v ON v.id = p.active_version_id
	LEFT JOIN users vu ON vu.id = v.uploaded_by`

const versionColumns = `v.id, v.plugin_id, v.version, v.sha256, v.package_sha256, v.manifest, v.signer, v.size,
	v.package_size, v.uploaded_by, vu.display_name, v.uploaded_at`

func scanPlugin(row interface{ Scan(...any) error }) (*Plugin, error) {
	var p Plugin
	var created, updated string
	var vid, vpid, ver, sha, psha, man, signer, by, byName, at sql.NullString
	var size, psize sql.NullInt64
	err := row.Scan(&p.ID, &p.OrgID, &p.Name, &p.OwnerID, &p.OwnerName, &p.Enabled, &p.Revision, &created, &updated,
		&vid, &vpid, &ver, &sha, &psha, &man, &signer, &size, &psize, &by, &byName, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = parseStamp(created), parseStamp(updated)
	if vid.Valid {
		p.Active = &PluginVersion{ID: vid.String, PluginID: vpid.String, Version: ver.String, SHA256: sha.String,
			PackageSHA256: psha.String, Manifest: json.RawMessage(man.String), Signer: signer.String, Size: size.Int64,
			PackageSize: psize.Int64, UploadedBy: by.String, UploadedByName: byName.String, UploadedAt: parseStamp(at.String),
			Active: true}
	}
	return &p, nil
}

func scanVersion(row interface{ Scan(...any) error }) (*PluginVersion, error) {
	var v PluginVersion
	var man, at string
	var byName sql.NullString
	err := row.Scan(&v.ID, &v.PluginID, &v.Version, &v.SHA256, &v.PackageSHA256, &man, &v.Signer, &v.Size,
		&v.PackageSize, &v.UploadedBy, &byName, &at, &v.Active)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	v.Manifest, v.UploadedByName, v.UploadedAt = json.RawMessage(man), byName.String, parseStamp(at)
	return &v, nil
}

// canUpload reports whether sc may upload plugins at all.
func canUpload(sc Scope) bool { return sc.Role == RoleOperator || sc.Role == RoleDeveloper }

// AddPluginVersion records an uploaded version. The first upload of a name
// creates the plugin, owned by the uploader and enabled; a developer may
// add versions only to their own plugins, an operator to any of the
// organisation. The new version becomes active when the plugin has none
// or when it is newer (semver) than the active one; an older version is
// kept for rollback. A version that exists already is an ErrConflict.
func (s *Store) AddPluginVersion(ctx context.Context, sc Scope, nv NewPluginVersion) (*Plugin, *PluginVersion, error) {
	if !canUpload(sc) {
		return nil, nil, ErrNotFound
	}
	next, err := plugins.ParseSemver(nv.Version)
	if err != nil {
		return nil, nil, fmt.Errorf("plugin %s: version: %w", nv.Name, err)
	}
	if !json.Valid(nv.Manifest) {
		return nil, nil, fmt.Errorf("plugin %s@%s: manifest is not valid JSON", nv.Name, nv.Version)
	}
	versionID := NewID()
	var pluginID string
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var owner string
		var active sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT p.id, p.owner_id, v.version FROM plugins p
			LEFT JOIN plugin_versions v ON v.id = p.active_version_id WHERE p.org_id = ? AND p.name = ?`,
			sc.OrgID, nv.Name).Scan(&pluginID, &owner, &active)
		now := s.stamp()
		switch {
		case errors.Is(err, sql.ErrNoRows):
			pluginID = NewID()
			if _, err := tx.ExecContext(ctx, `INSERT INTO plugins(id, org_id, name, owner_id, enabled, revision, created_at, updated_at)
				VALUES (?, ?, ?, ?, 1, 1, ?, ?)`, pluginID, sc.OrgID, nv.Name, sc.UserID, now, now); err != nil {
				return fmt.Errorf("plugin %s: %w", nv.Name, err)
			}
		case err != nil:
			return err
		case sc.Role != RoleOperator && owner != sc.UserID:
			return fmt.Errorf("the plugin name %q belongs to another developer of this organisation: %w", nv.Name, ErrConflict)
		}
		var dup int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM plugin_versions WHERE plugin_id = ? AND version = ?`,
			pluginID, nv.Version).Scan(&dup); err != nil {
			return err
		}
		if dup > 0 {
			return fmt.Errorf("%s@%s is already uploaded; a new build needs a new version in its manifest: %w", nv.Name, nv.Version, ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO plugin_versions(id, plugin_id, version, sha256, package_sha256, manifest,
			signer, size, package_size, uploaded_by, uploaded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			versionID, pluginID, nv.Version, nv.SHA256, nv.PackageSHA256, string(nv.Manifest), nv.Signer, nv.Size,
			nv.PackageSize, sc.UserID, now); err != nil {
			return fmt.Errorf("plugin %s@%s: %w", nv.Name, nv.Version, err)
		}
		activate := !active.Valid
		if active.Valid {
			cur, err := plugins.ParseSemver(active.String)
			activate = err != nil || next.Compare(cur) > 0
		}
		set := ``
		if activate {
			set = `active_version_id = ?, `
		}
		args := []any{now, pluginID}
		if activate {
			args = append([]any{versionID}, args...)
		}
		_, err = tx.ExecContext(ctx, `UPDATE plugins SET `+set+`revision = revision + 1, updated_at = ? WHERE id = ?`, args...)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	p, err := s.pluginByID(ctx, sc, pluginID)
	if err != nil {
		return nil, nil, err
	}
	v, err := s.PluginVersion(ctx, sc, nv.Name, nv.Version)
	if err != nil {
		return nil, nil, err
	}
	return p, v, nil
}

func (s *Store) pluginByID(ctx context.Context, sc Scope, id string) (*Plugin, error) {
	return scanPlugin(s.db.QueryRowContext(ctx, pluginSelect+` WHERE p.id = ? AND `+pluginFilter,
		append([]any{id}, pluginArgs(sc)...)...))
}

// Plugin reads the named plugin if the scope sees it.
func (s *Store) Plugin(ctx context.Context, sc Scope, name string) (*Plugin, error) {
	return scanPlugin(s.db.QueryRowContext(ctx, pluginSelect+` WHERE p.name = ? AND `+pluginFilter,
		append([]any{name}, pluginArgs(sc)...)...))
}

// Plugins lists the plugins the scope sees, by name.
func (s *Store) Plugins(ctx context.Context, sc Scope) ([]Plugin, error) {
	rows, err := s.db.QueryContext(ctx, pluginSelect+` WHERE `+pluginFilter+` ORDER BY p.name`, pluginArgs(sc)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Plugin
	for rows.Next() {
		p, err := scanPlugin(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, rows.Err()
}

const versionSelect = `SELECT ` + versionColumns + `, COALESCE(p.active_version_id = v.id, 0)
	FROM plugin_versions v JOIN plugins p ON p.id = v.plugin_id LEFT JOIN users vu ON vu.id = v.uploaded_by`

// PluginVersions lists the uploaded versions of a plugin the scope sees,
// newest upload first.
func (s *Store) PluginVersions(ctx context.Context, sc Scope, name string) ([]PluginVersion, error) {
	if _, err := s.Plugin(ctx, sc, name); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, versionSelect+` WHERE p.name = ? AND `+pluginFilter+` ORDER BY v.uploaded_at DESC, v.version DESC`,
		append([]any{name}, pluginArgs(sc)...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PluginVersion
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// PluginVersion reads one version of a plugin the scope sees.
func (s *Store) PluginVersion(ctx context.Context, sc Scope, name, version string) (*PluginVersion, error) {
	return scanVersion(s.db.QueryRowContext(ctx, versionSelect+` WHERE p.name = ? AND v.version = ? AND `+pluginFilter,
		append([]any{name, version}, pluginArgs(sc)...)...))
}

// change applies an update to a plugin the scope sees, in a transaction
// that first checks the revision (0 skips the check), then bumps it.
func (s *Store) changePlugin(ctx context.Context, sc Scope, name string, revision int64, update func(tx *sql.Tx, id string) error) (*Plugin, error) {
	var id string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var rev int64
		err := tx.QueryRowContext(ctx, `SELECT p.id, p.revision FROM plugins p WHERE p.name = ? AND `+pluginFilter,
			append([]any{name}, pluginArgs(sc)...)...).Scan(&id, &rev)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if revision != 0 && rev != revision {
			return ErrConflict
		}
		if err := update(tx, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE plugins SET revision = revision + 1, updated_at = ? WHERE id = ?`, s.stamp(), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.pluginByID(ctx, sc, id)
}

// SetPluginEnabled switches a plugin on or off for the organisation's
// streams (from their next turn). revision, when not 0, must be current.
func (s *Store) SetPluginEnabled(ctx context.Context, sc Scope, name string, enabled bool, revision int64) (*Plugin, error) {
	return s.changePlugin(ctx, sc, name, revision, func(tx *sql.Tx, id string) error {
		_, err := tx.ExecContext(ctx, `UPDATE plugins SET enabled = ? WHERE id = ?`, enabled, id)
		return err
	})
}

// ActivatePluginVersion makes an uploaded version the active one: a
// rollback to an earlier version or a move forward again. revision, when
// not 0, must be current.
func (s *Store) ActivatePluginVersion(ctx context.Context, sc Scope, name, version string, revision int64) (*Plugin, error) {
	return s.changePlugin(ctx, sc, name, revision, func(tx *sql.Tx, id string) error {
		var vid string
		err := tx.QueryRowContext(ctx, `SELECT id FROM plugin_versions WHERE plugin_id = ? AND version = ?`, id, version).Scan(&vid)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("plugin %s has no version %q: %w", name, version, ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE plugins SET active_version_id = ? WHERE id = ?`, vid, id)
		return err
	})
}

// ActivePlugins lists the active versions of an organisation's enabled
// plugins: what its live sessions run. It is the runtime's view, not a
// user's, so it takes no Scope.
func (s *Store) ActivePlugins(ctx context.Context, orgID string) ([]RuntimePlugin, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT p.name, v.version, v.id, v.package_sha256, v.signer FROM plugins p
		JOIN plugin_versions v ON v.id = p.active_version_id WHERE p.org_id = ? AND p.enabled = 1 ORDER BY p.name`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RuntimePlugin
	for rows.Next() {
		var r RuntimePlugin
		if err := rows.Scan(&r.Name, &r.Version, &r.VersionID, &r.PackageSHA256, &r.Signer); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// EnabledPlugin is the active version of an enabled plugin, with its
// organisation and manifest.
type EnabledPlugin struct {
	OrgID, Name, Version string
	Manifest             json.RawMessage
}

// EnabledPlugins lists the active versions of every organisation's enabled
// plugins, what the live sessions of the whole process run (the console's
// plugin memory budget counts their limits). Like ActivePlugins it is the
// runtime's view and takes no Scope.
func (s *Store) EnabledPlugins(ctx context.Context) ([]EnabledPlugin, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT p.org_id, p.name, v.version, v.manifest FROM plugins p
		JOIN plugin_versions v ON v.id = p.active_version_id WHERE p.enabled = 1 ORDER BY p.org_id, p.name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []EnabledPlugin
	for rows.Next() {
		var e EnabledPlugin
		var manifest string
		if err := rows.Scan(&e.OrgID, &e.Name, &e.Version, &manifest); err != nil {
			return nil, err
		}
		e.Manifest = json.RawMessage(manifest)
		out = append(out, e)
	}
	return out, rows.Err()
}

// PluginCount counts the plugins of every organisation (first-run setup
// installs the examples into an empty store).
func (s *Store) PluginCount(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM plugins`).Scan(&n)
	return n, err
}

// PluginKeys lists the signing keys the scope's organisation trusts.
// Operators and developers see them; merchants get ErrNotFound.
func (s *Store) PluginKeys(ctx context.Context, sc Scope) ([]PluginKey, error) {
	if !canUpload(sc) {
		return nil, ErrNotFound
	}
	rows, err := s.db.QueryContext(ctx, `SELECT k.key_id, k.public_key, COALESCE(u.display_name, ''), k.created_at
		FROM plugin_keys k LEFT JOIN users u ON u.id = k.added_by WHERE k.org_id = ? ORDER BY k.key_id`, sc.OrgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PluginKey
	for rows.Next() {
		var k PluginKey
		var at string
		if err := rows.Scan(&k.KeyID, &k.PublicKey, &k.AddedBy, &at); err != nil {
			return nil, err
		}
		k.CreatedAt = parseStamp(at)
		out = append(out, k)
	}
	return out, rows.Err()
}

// AddPluginKey trusts an ed25519 public key (hex) under keyID for the
// operator's organisation; an existing key id is an ErrConflict.
func (s *Store) AddPluginKey(ctx context.Context, sc Scope, keyID, publicKeyHex string) (*PluginKey, error) {
	if sc.Role != RoleOperator {
		return nil, ErrNotFound
	}
	now := s.stamp()
	_, err := s.db.ExecContext(ctx, `INSERT INTO plugin_keys(org_id, key_id, public_key, added_by, created_at) VALUES (?, ?, ?, ?, ?)`,
		sc.OrgID, keyID, publicKeyHex, sc.UserID, now)
	if isUniqueViolation(err) {
		return nil, fmt.Errorf("key %q is already trusted: %w", keyID, ErrConflict)
	}
	if err != nil {
		return nil, err
	}
	return &PluginKey{KeyID: keyID, PublicKey: publicKeyHex, CreatedAt: parseStamp(now)}, nil
}

// DeletePluginKey stops trusting a key for new uploads; versions it
// signed keep their recorded signer.
func (s *Store) DeletePluginKey(ctx context.Context, sc Scope, keyID string) error {
	if sc.Role != RoleOperator {
		return ErrNotFound
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM plugin_keys WHERE org_id = ? AND key_id = ?`, sc.OrgID, keyID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
}
