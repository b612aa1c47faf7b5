package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/mattn/go-sqlite3"
)

// Role is what a user may see and do.
type Role string

// The three roles of the console.
const (
	// RoleOperator sees and changes everything of their organisation.
	RoleOperator Role = "operator"
	// RoleMerchant sees only their own merchant's streams, catalog,
	// strategy and sessions.
	RoleMerchant Role = "merchant"
	// RoleDeveloper manages their own plugins.
	RoleDeveloper Role = "developer"
)

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r == RoleOperator || r == RoleMerchant || r == RoleDeveloper }

// Scope is who is asking: every tenant query is filtered by it.
type Scope struct {
	OrgID      string
	UserID     string
	Role       Role
	MerchantID string // set for merchants only
}

// SeesMerchant reports whether the scope may read and change merchantID's data.
func (sc Scope) SeesMerchant(merchantID string) bool {
	return sc.Role == RoleOperator || (sc.Role == RoleMerchant && sc.MerchantID == merchantID)
}

// Org is an organisation: the tenant boundary.
type Org struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Merchant is a shop of an organisation that runs streams.
type Merchant struct {
	ID        string    `json:"id"`
	OrgID     string    `json:"org_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// User is a console account. PasswordHash never leaves the server.
type User struct {
	ID           string    `json:"id"`
	OrgID        string    `json:"org_id"`
	Username     string    `json:"username"`
	DisplayName  string    `json:"display_name"`
	Role         Role      `json:"role"`
	MerchantID   string    `json:"merchant_id,omitempty"`
	PasswordHash string    `json:"-"`
	CreatedAt    time.Time `json:"created_at"`
}

// Scope is the user's query scope.
func (u *User) Scope() Scope {
	return Scope{OrgID: u.OrgID, UserID: u.ID, Role: u.Role, MerchantID: u.MerchantID}
}

// APIToken describes a token for scripts; the secret is shown once at creation.
type APIToken struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// NewID returns a fresh random identifier.
func NewID() string { return uuid.NewString() }

// CreateOrg adds an organisation.
func (s *Store) CreateOrg(ctx context.Context, name string) (*Org, error) {
	if name == "" {
		return nil, fmt.Errorf("org: name is required")
	}
	o := &Org{ID: NewID(), Name: name, CreatedAt: s.now().UTC()}
	_, err := s.db.ExecContext(ctx, `INSERT INTO orgs(id, name, created_at) VALUES (?, ?, ?)`, o.ID, o.Name, s.stamp())
	if err != nil {
		return nil, fmt.Errorf("org: %w", err)
	}
	return o, nil
}

// Orgs lists every organisation (for first-run bootstrap).
func (s *Store) Orgs(ctx context.Context) ([]Org, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, created_at FROM orgs ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Org
	for rows.Next() {
		var o Org
		var at string
		if err := rows.Scan(&o.ID, &o.Name, &at); err != nil {
			return nil, err
		}
		o.CreatedAt = parseStamp(at)
		out = append(out, o)
	}
	return out, rows.Err()
}

// CreateMerchant adds a merchant to the scope's organisation; operators only.
func (s *Store) CreateMerchant(ctx context.Context, sc Scope, name string) (*Merchant, error) {
	if sc.Role != RoleOperator {
		return nil, ErrNotFound
	}
	if name == "" {
		return nil, fmt.Errorf("merchant: name is required")
	}
	m := &Merchant{ID: NewID(), OrgID: sc.OrgID, Name: name, CreatedAt: s.now().UTC()}
	_, err := s.db.ExecContext(ctx, `INSERT INTO merchants(id, org_id, name, created_at) VALUES (?, ?, ?, ?)`,
		m.ID, m.OrgID, m.Name, s.stamp())
	if err != nil {
		return nil, fmt.Errorf("merchant: %w", err)
	}
	return m, nil
}

// Merchants lists the merchants the scope sees.
func (s *Store) Merchants(ctx context.Context, sc Scope) ([]Merchant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, org_id, name, created_at FROM merchants
		WHERE org_id = ? AND (? = 'operator' OR id = ?) ORDER BY name, id`, sc.OrgID, string(sc.Role), sc.MerchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Merchant
	for rows.Next() {
		var m Merchant
		var at string
		if err := rows.Scan(&m.ID, &m.OrgID, &m.Name, &at); err != nil {
			return nil, err
		}
		m.CreatedAt = parseStamp(at)
		out = append(out, m)
	}
	return out, rows.Err()
}

// NewUser is what CreateUser needs.
type NewUser struct {
	OrgID        string
	Username     string
	DisplayName  string
	Role         Role
	MerchantID   string
	PasswordHash string
}

// ErrUsernameTaken is returned by CreateUser for a duplicate username.
var ErrUsernameTaken = errors.New("username is taken")

// CreateUser adds an account.
func (s *Store) CreateUser(ctx context.Context, nu NewUser) (*User, error) {
	switch {
	case nu.Username == "":
		return nil, fmt.Errorf("user: username is required")
	case !nu.Role.Valid():
		return nil, fmt.Errorf("user: role %q: want operator, merchant or developer", nu.Role)
	case (nu.Role == RoleMerchant) != (nu.MerchantID != ""):
		return nil, fmt.Errorf("user: merchant_id is required for, and only for, the merchant role")
	case nu.PasswordHash == "":
		return nil, fmt.Errorf("user: password hash is required")
	}
	if nu.DisplayName == "" {
		nu.DisplayName = nu.Username
	}
	u := &User{ID: NewID(), OrgID: nu.OrgID, Username: nu.Username, DisplayName: nu.DisplayName, Role: nu.Role,
		MerchantID: nu.MerchantID, PasswordHash: nu.PasswordHash, CreatedAt: s.now().UTC()}
	_, err := s.db.ExecContext(ctx, `INSERT INTO users(id, org_id, username, display_name, role, merchant_id, password_hash, created_at)
		VALUES (?, ?, ?, ?, ?, NULLIF(?, ''), ?, ?)`,
		u.ID, u.OrgID, u.Username, u.DisplayName, string(u.Role), u.MerchantID, u.PasswordHash, s.stamp())
	var se sqlite3.Error
	if errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique {
		return nil, fmt.Errorf("user %q: %w", nu.Username, ErrUsernameTaken)
	}
	if err != nil {
		return nil, fmt.Errorf("user: %w", err)
	}
	return u, nil
}

const userColumns = `id, org_id, username, display_name, role, COALESCE(merchant_id, ''), password_hash, created_at`

func scanUser(row interface{ Scan(...any) error }) (*User, error) {
	var u User
	var role, at string
	if err := row.Scan(&u.ID, &u.OrgID, &u.Username, &u.DisplayName, &role, &u.MerchantID, &u.PasswordHash, &at); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	u.Role, u.CreatedAt = Role(role), parseStamp(at)
	return &u, nil
}

// UserByUsername finds an account for login.
func (s *Store) UserByUsername(ctx context.Context, username string) (*User, error) {
	return scanUser(s.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE username = ?`, username))
}

// Users lists the accounts of the scope's organisation; operators only.
func (s *Store) Users(ctx context.Context, sc Scope) ([]User, error) {
	if sc.Role != RoleOperator {
		return nil, ErrNotFound
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+userColumns+` FROM users WHERE org_id = ? ORDER BY username`, sc.OrgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *u)
	}
	return out, rows.Err()
}

// secret returns a random URL-safe token and its sha256 (what is stored:
// a leaked database does not hand out live sessions or tokens).
func secret() (plain, hash string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	plain = base64.RawURLEncoding.EncodeToString(b)
	return plain, hashSecret(plain)
}

func hashSecret(plain string) string {
	h := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(h[:])
}

// LoginSession is a browser session: the cookie value and its CSRF token.
type LoginSession struct {
	Token     string
	CSRF      string
	ExpiresAt time.Time
}

// CreateSession starts a browser session for userID lasting ttl.
func (s *Store) CreateSession(ctx context.Context, userID string, ttl time.Duration) (*LoginSession, error) {
	tok, hash := secret()
	csrf, _ := secret()
	exp := s.now().Add(ttl).UTC()
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions(token_hash, user_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		hash, userID, csrf, s.stamp(), exp.Format(time.RFC3339Nano))
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	return &LoginSession{Token: tok, CSRF: csrf, ExpiresAt: exp}, nil
}

// ErrExpired is returned for a session past its expiry.
var ErrExpired = errors.New("session expired")

// SessionUser resolves a session cookie to its user and CSRF token.
func (s *Store) SessionUser(ctx context.Context, token string) (*User, string, error) {
	var csrf, exp string
	err := s.db.QueryRowContext(ctx, `SELECT csrf, expires_at FROM sessions WHERE token_hash = ?`, hashSecret(token)).Scan(&csrf, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", err
	}
	if !s.now().Before(parseStamp(exp)) {
		s.db.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, hashSecret(token))
		return nil, "", ErrExpired
	}
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users
		WHERE id = (SELECT user_id FROM sessions WHERE token_hash = ?)`, hashSecret(token)))
	return u, csrf, err
}

// DeleteSession ends a browser session (logout).
func (s *Store) DeleteSession(ctx context.Context, token string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, hashSecret(token))
	return err
}

// CreateAPIToken issues a token for scripts; the plain secret is returned
// once and only its hash is kept.
func (s *Store) CreateAPIToken(ctx context.Context, sc Scope, name string) (*APIToken, string, error) {
	if name == "" {
		return nil, "", fmt.Errorf("token: name is required")
	}
	plain, hash := secret()
	t := &APIToken{ID: NewID(), UserID: sc.UserID, Name: name, CreatedAt: s.now().UTC()}
	_, err := s.db.ExecContext(ctx, `INSERT INTO api_tokens(id, user_id, name, token_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
		t.ID, t.UserID, t.Name, hash, s.stamp())
	if err != nil {
		return nil, "", fmt.Errorf("token: %w", err)
	}
	return t, "lh_" + plain, nil
}

// APITokens lists the scope user's tokens.
func (s *Store) APITokens(ctx context.Context, sc Scope) ([]APIToken, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, user_id, name, created_at, COALESCE(last_used_at, '') FROM api_tokens
		WHERE user_id = ? ORDER BY created_at`, sc.UserID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []APIToken
	for rows.Next() {
		var t APIToken
		var at, used string
		if err := rows.Scan(&t.ID, &t.UserID, &t.Name, &at, &used); err != nil {
			return nil, err
		}
		t.CreatedAt = parseStamp(at)
		if used != "" {
			u := parseStamp(used)
			t.LastUsedAt = &u
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeAPIToken deletes one of the scope user's tokens.
func (s *Store) RevokeAPIToken(ctx context.Context, sc Scope, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM api_tokens WHERE id = ? AND user_id = ?`, id, sc.UserID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// TokenUser resolves an API token ("lh_…") to its user.
func (s *Store) TokenUser(ctx context.Context, token string) (*User, error) {
	if len(token) < 4 || token[:3] != "lh_" {
		return nil, ErrNotFound
	}
	hash := hashSecret(token[3:])
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users
		WHERE id = (SELECT user_id FROM api_tokens WHERE token_hash = ?)`, hash))
	if err != nil {
		return nil, err
	}
	s.db.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE token_hash = ?`, s.stamp(), hash)
	return u, nil
}
