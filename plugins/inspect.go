package plugins

import (
	"context"
	"fmt"
	"slices"

	"github.com/livehat/livehat/plugins/internal/engine"
)

// Inspection describes a package without loading it into a host: what its
// manifest declares and asks for, what its module imports and exports, and
// every mismatch between the two that would make a host refuse it or a
// call fail.
type Inspection struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	ABI         int    `json:"abi"`
	Description string `json:"description,omitempty"`
	// Declares is Manifest.Declared: KIND:NAME of every tool, hook and skill.
	Declares    []string            `json:"declares"`
	Permissions []PermissionRequest `json:"permissions"`
	// Limits are the manifest's limits with the defaults filled in.
	Limits Limits `json:"limits"`
	// Size and SHA256 are the module's; Pinned reports whether the
	// manifest's wasm.sha256 names this module.
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	Pinned bool   `json:"pinned"`
	// SignedBy is the key id of the package's signature, not verified:
	// Inspect trusts no keys.
	SignedBy string `json:"signed_by,omitempty"`
	// Imports are "module.name" of every imported function; Exports the
	// exported functions with their signatures, such as "lookup() -> (i32)".
	Imports     []string `json:"imports"`
	Exports     []string `json:"exports"`
	MemoryPages uint32   `json:"memory_min_pages"`
	// Problems are what a host would refuse or a call would fail on; none
	// for a sound package.
	Problems []string `json:"problems,omitempty"`
}

// Inspect decodes pkg's module without compiling or running it and checks
// it against the manifest: the host functions it imports, the pinned hash,
// its memory against limits.memory_pages, and an export of type
// () -> i32 for everything the manifest declares.
func Inspect(ctx context.Context, pkg *Package) (*Inspection, error) {
	m := pkg.Manifest
	mi, err := engine.Inspect(ctx, pkg.Wasm)
	if err != nil {
		return nil, err
	}
	in := &Inspection{Name: m.Name, Version: m.Version, ABI: m.ABI, Description: m.Description, Declares: m.Declared(),
		Permissions: m.Permissions, Limits: m.Limits.WithDefaults(), Size: len(pkg.Wasm), SHA256: SHA256Hex(pkg.Wasm),
		Imports: mi.Imports, Exports: mi.Exports, MemoryPages: mi.MemoryMinPages}
	in.Pinned = m.Wasm.SHA256 == in.SHA256
	if pkg.Signature != nil {
		in.SignedBy = pkg.Signature.KeyID
	}
	if mi.Problem != "" {
		in.Problems = append(in.Problems, mi.Problem)
	}
	if !in.Pinned {
		in.Problems = append(in.Problems, "the manifest's wasm.sha256 does not match the module")
	}
	if mi.MemoryMinPages > in.Limits.MemoryPages {
		in.Problems = append(in.Problems, fmt.Sprintf("the module needs %d memory pages; limits.memory_pages is %d", mi.MemoryMinPages, in.Limits.MemoryPages))
	}
	check := func(kind Kind, name, export string) {
		if !slices.Contains(mi.Exports, export+"() -> (i32)") {
			in.Problems = append(in.Problems, fmt.Sprintf("%s:%s: no export %q of type () -> i32", kind, name, export))
		}
	}
	for _, t := range m.Tools {
		check(KindTool, t.Name, t.ExportName())
	}
	for _, h := range m.Hooks {
		check(KindHook, h.Name, h.ExportName())
	}
	for _, s := range m.Skills {
		check(KindSkill, s.ID, s.ExportName())
	}
	return in, nil
}
