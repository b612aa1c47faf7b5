package plugins

import (
	"archive/zip"
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Package is a plugin as it is distributed: manifest, module and an
// optional signature. Its archive form (PackageExt) is a zip holding
// manifest.json, the module under the manifest's wasm.file, and
// signature.json when signed.
type Package struct {
	Manifest  *Manifest
	Wasm      []byte
	Signature *Signature
}

// PackageExt is the file extension of packed plugins.
const PackageExt = ".lhp"

// Names of the package archive members besides the module.
const (
	manifestEntry  = "manifest.json"
	signatureEntry = "signature.json"
	maxEntryBytes  = 64 << 20
	maxPackedBytes = 128 << 20
)

// Signature is an ed25519 signature over a package's signing message
// (see SigningMessage), made with the key named KeyID.
type Signature struct {
	KeyID string `json:"key_id"`
	// Sig is the 64-byte signature, base64 in JSON.
	Sig []byte `json:"signature"`
}

// signingDomain separates our signatures from any other use of the key.
const signingDomain = "livehat-plugin-signature-v1\n"

// SigningMessage returns the bytes a signature covers: a domain prefix and
// the manifest's JSON, which pins the module's sha256, so one signature
// covers both.
func (p *Package) SigningMessage() ([]byte, error) {
	if p.Manifest == nil {
		return nil, errors.New("package: no manifest")
	}
	m, err := json.Marshal(p.Manifest)
	if err != nil {
		return nil, fmt.Errorf("package: encoding manifest: %w", err)
	}
	return append([]byte(signingDomain), m...), nil
}

// Pin sets the manifest's wasm.sha256 to the module's hash.
func (p *Package) Pin() {
	p.Manifest.Wasm.SHA256 = SHA256Hex(p.Wasm)
}

// Sign pins the module and signs the package with key, named keyID.
func (p *Package) Sign(keyID string, key ed25519.PrivateKey) error {
	if keyID == "" || len(key) != ed25519.PrivateKeySize {
		return errors.New("package: sign: need a key id and an ed25519 private key")
	}
	p.Pin()
	msg, err := p.SigningMessage()
	if err != nil {
		return err
	}
	p.Signature = &Signature{KeyID: keyID, Sig: ed25519.Sign(key, msg)}
	return nil
}

// Verify checks the module against the manifest's pin and, when the
// package is signed, the signature against trusted keys. It returns the
// id of the key that signed, or "" for an unsigned package.
func (p *Package) Verify(trusted map[string]ed25519.PublicKey) (string, error) {
	if p.Manifest == nil {
		return "", errors.New("package: no manifest")
	}
	if err := p.Manifest.Validate(); err != nil {
		return "", err
	}
	want := p.Manifest.Wasm.SHA256
	if want == "" {
		return "", fmt.Errorf("%w: manifest %q does not pin its module (wasm.sha256 is empty)", ErrIntegrity, p.Manifest.Name)
	}
	if got := SHA256Hex(p.Wasm); got != want {
		return "", fmt.Errorf("%w: module sha256 %s does not match the manifest's %s", ErrIntegrity, got, want)
	}
	if p.Signature == nil {
		return "", nil
	}
	key, ok := trusted[p.Signature.KeyID]
	if !ok {
		return "", fmt.Errorf("%w: signed by key %q, which is not trusted", ErrSignature, p.Signature.KeyID)
	}
	msg, err := p.SigningMessage()
	if err != nil {
		return "", err
	}
	if len(key) != ed25519.PublicKeySize || !ed25519.Verify(key, msg, p.Signature.Sig) {
		return "", fmt.Errorf("%w: signature by key %q does not verify", ErrSignature, p.Signature.KeyID)
	}
	return p.Signature.KeyID, nil
}

// Archive encodes the package as a zip archive (the .lhp format).
func (p *Package) Archive() ([]byte, error) {
	if p.Manifest == nil {
		return nil, errors.New("package: no manifest")
	}
	man, err := json.MarshalIndent(p.Manifest, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("package: encoding manifest: %w", err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	entries := []struct {
		name string
		data []byte
	}{{manifestEntry, man}, {p.Manifest.Wasm.File, p.Wasm}}
	if p.Signature != nil {
		sig, err := json.MarshalIndent(p.Signature, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("package: encoding signature: %w", err)
		}
		entries = append(entries, struct {
			name string
			data []byte
		}{signatureEntry, sig})
	}
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err != nil {
			return nil, fmt.Errorf("package: %s: %w", e.name, err)
		}
		if _, err := w.Write(e.data); err != nil {
			return nil, fmt.Errorf("package: %s: %w", e.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("package: %w", err)
	}
	return buf.Bytes(), nil
}

// ReadPackage decodes a .lhp archive. It checks structure only; Verify
// (or Host.Load) checks integrity and signature.
func ReadPackage(data []byte) (*Package, error) {
	if len(data) > maxPackedBytes {
		return nil, fmt.Errorf("package: %d bytes is over the %d-byte limit", len(data), maxPackedBytes)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("package: not a zip archive: %w", err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		if _, dup := files[f.Name]; dup {
			return nil, fmt.Errorf("package: entry %q appears twice", f.Name)
		}
		if f.UncompressedSize64 > maxEntryBytes {
			return nil, fmt.Errorf("package: entry %q is over %d bytes", f.Name, maxEntryBytes)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("package: %s: %w", f.Name, err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, maxEntryBytes+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("package: %s: %w", f.Name, err)
		}
		if len(b) > maxEntryBytes {
			return nil, fmt.Errorf("package: entry %q is over %d bytes", f.Name, maxEntryBytes)
		}
		files[f.Name] = b
	}
	man, ok := files[manifestEntry]
	if !ok {
		return nil, fmt.Errorf("package: no %s", manifestEntry)
	}
	m, err := ParseManifest(man)
	if err != nil {
		return nil, fmt.Errorf("package: %w", err)
	}
	wasm, ok := files[m.Wasm.File]
	if !ok {
		return nil, fmt.Errorf("package: the manifest names module %q, which the archive lacks", m.Wasm.File)
	}
	p := &Package{Manifest: m, Wasm: wasm}
	if sig, ok := files[signatureEntry]; ok {
		var s Signature
		if err := json.Unmarshal(sig, &s); err != nil {
			return nil, fmt.Errorf("package: %s: %w", signatureEntry, err)
		}
		p.Signature = &s
	}
	extra := []string{}
	for name := range files {
		if name != manifestEntry && name != signatureEntry && name != m.Wasm.File {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("package: unexpected entries %q", extra)
	}
	return p, nil
}

// ManifestFiles are the names a plugin directory's manifest may have, in
// the order they are tried.
func ManifestFiles() []string { return []string{"plugin.json", "plugin.yaml", "plugin.yml"} }

// ReadManifestDir reads and parses the manifest of a plugin directory.
func ReadManifestDir(dir string) (*Manifest, string, error) {
	for _, name := range ManifestFiles() {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		m, err := ParseManifest(data)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		return m, path, nil
	}
	return nil, "", fmt.Errorf("%s: no manifest (want one of %v)", dir, ManifestFiles())
}

// ReadDir reads a built plugin directory (manifest and module) as a
// package. The module must already be built (see BuildDir). A source
// manifest usually leaves wasm.sha256 empty, since every build changes
// it; ReadDir then pins the module it finds, and Pack writes the pin.
func ReadDir(dir string) (*Package, error) {
	m, _, err := ReadManifestDir(dir)
	if err != nil {
		return nil, err
	}
	wasm, err := os.ReadFile(filepath.Join(dir, m.Wasm.File))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: module: %w", m.Name, err)
	}
	p := &Package{Manifest: m, Wasm: wasm}
	if m.Wasm.SHA256 == "" {
		p.Pin()
	}
	return p, nil
}
