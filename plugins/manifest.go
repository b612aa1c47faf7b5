package plugins

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// ABIVersion is the version of the LiveHAT plugin ABI this host speaks.
// A manifest must declare it in "abi"; a module that exports
// "livehat_abi_v<N>" must export it for this version. See sdk/ABI.md.
const ABIVersion = 1

// Kind is what a plugin export implements.
type Kind string

// Plugin kinds.
const (
	KindTool  Kind = "tool"  // a function the model calls with JSON arguments
	KindHook  Kind = "hook"  // runs at a lifecycle event and returns a decision
	KindSkill Kind = "skill" // computes a skill's text when the model loads it
)

// ParseKind parses "tool", "hook" or "skill".
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case KindTool, KindHook, KindSkill:
		return k, nil
	}
	return "", fmt.Errorf("unknown plugin kind %q (want tool, hook or skill)", s)
}

// Permission names a host capability a plugin asks for. Without the
// permission the matching host functions refuse to run.
type Permission string

// Permissions a manifest may request.
const (
	// PermCatalog unlocks livehat_catalog_lookup: products, coupons and
	// promotions of the stream the call serves.
	PermCatalog Permission = "catalog"
	// PermKV unlocks the Extism var_get/var_set functions, backed by a
	// key-value store scoped to the plugin and the stream, with a quota.
	PermKV Permission = "kv"
	// PermLog lets the Extism log_* functions reach the host's logs.
	PermLog Permission = "log"
	// PermClock gives the plugin the stream's wall clock; without it the
	// guest sees a fixed, deterministic time.
	PermClock Permission = "clock"
)

// Permissions lists every permission a manifest may request.
func Permissions() []Permission {
	return []Permission{PermCatalog, PermKV, PermLog, PermClock}
}

// Manifest describes one plugin version: what it exports, what it may do
// and how much it may use. It travels next to the .wasm, which it pins by
// sha256.
type Manifest struct {
	// ABI is the LiveHAT ABI version the plugin was built for.
	ABI int `json:"abi"`
	// Name identifies the plugin: lower-case letters, digits and dashes.
	Name string `json:"name"`
	// Version is a semantic version (MAJOR.MINOR.PATCH[-pre][+build]).
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	Author      string `json:"author,omitempty"`
	// Wasm names the module file and pins its content.
	Wasm WasmRef `json:"wasm"`
	// Tools, Hooks and Skills are the plugin's kinds; each entry names the
	// export that implements it.
	Tools  []ToolSpec  `json:"tools,omitempty"`
	Hooks  []HookSpec  `json:"hooks,omitempty"`
	Skills []SkillSpec `json:"skills,omitempty"`
	// Permissions are the host capabilities requested, each with a reason
	// shown to the operator who installs the plugin.
	Permissions []PermissionRequest `json:"permissions,omitempty"`
	// Limits bound what one call may use; zero fields take the defaults.
	Limits Limits `json:"limits,omitempty"`
	// Config is read-only data the guest reads with Extism's config_get.
	Config map[string]string `json:"config,omitempty"`
}

// WasmRef names the module file of a plugin and pins its content.
type WasmRef struct {
	// File is the module's file name inside the plugin directory or package.
	File string `json:"file"`
	// SHA256 is the lower-case hex sha256 of the module's bytes.
	SHA256 string `json:"sha256"`
}

// ToolSpec declares a tool.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Export is the module export; default Name.
	Export string `json:"export,omitempty"`
	// Parameters is the JSON Schema of the arguments object. The host
	// validates arguments against it before the guest runs.
	Parameters json.RawMessage `json:"parameters"`
}

// HookSpec declares a hook.
type HookSpec struct {
	Name  string            `json:"name"`
	Event harness.HookEvent `json:"event"`
	// Export is the module export; default Name.
	Export string `json:"export,omitempty"`
	// OnFailure is the policy the manifest recommends; default fail_open.
	OnFailure harness.FailurePolicy `json:"on_failure,omitempty"`
	// Config is the hook's default configuration; a harness may override it.
	Config json.RawMessage `json:"config,omitempty"`
}

// SkillSpec declares a skill whose text the plugin computes.
type SkillSpec struct {
	ID          string            `json:"id"`
	Kind        harness.SkillKind `json:"kind,omitempty"`
	Description string            `json:"description"`
	// Export is the module export; default ID.
	Export string `json:"export,omitempty"`
	// Text is the fallback text used when the export fails.
	Text string `json:"text,omitempty"`
}

// PermissionRequest asks for one permission and says why.
type PermissionRequest struct {
	Name   Permission `json:"name"`
	Reason string     `json:"reason"`
}

// Limits bound the resources of one plugin. Zero fields take defaults.
type Limits struct {
	// MemoryPages caps the guest's linear memory, in 64 KiB pages.
	MemoryPages uint32 `json:"memory_pages,omitempty"`
	// TimeoutMS is the deadline of one call, in milliseconds.
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// MaxInputBytes and MaxOutputBytes bound one call's payloads.
	MaxInputBytes  int `json:"max_input_bytes,omitempty"`
	MaxOutputBytes int `json:"max_output_bytes,omitempty"`
	// Instances is the most instances that run this plugin at once.
	Instances int `json:"instances,omitempty"`
	// KVBytes is the quota of the plugin's key-value scope.
	KVBytes int `json:"kv_bytes,omitempty"`
}

// Default and maximum limits. Defaults suit a standard-Go guest (whose
// runtime alone declares 44 pages) answering in the live path.
const (
	DefaultMemoryPages    = 512 // 32 MiB
	MaxMemoryPages        = 4096
	DefaultTimeout        = 500 * time.Millisecond
	MaxTimeout            = 30 * time.Second
	DefaultMaxInputBytes  = 1 << 20
	DefaultMaxOutputBytes = 1 << 20
	MaxPayloadBytes       = 16 << 20
	DefaultInstances      = 4
	MaxInstances          = 64
	DefaultKVBytes        = 64 << 10
	MaxKVBytes            = 16 << 20
)

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.MemoryPages == 0 {
		l.MemoryPages = DefaultMemoryPages
	}
	if l.TimeoutMS == 0 {
		l.TimeoutMS = int(DefaultTimeout / time.Millisecond)
	}
	if l.MaxInputBytes == 0 {
		l.MaxInputBytes = DefaultMaxInputBytes
	}
	if l.MaxOutputBytes == 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.Instances == 0 {
		l.Instances = DefaultInstances
	}
	if l.KVBytes == 0 {
		l.KVBytes = DefaultKVBytes
	}
	return l
}

// Timeout returns the per-call deadline.
func (l Limits) Timeout() time.Duration {
	return time.Duration(l.WithDefaults().TimeoutMS) * time.Millisecond
}

var (
	nameRE   = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}[a-z0-9]$`)
	exportRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ParseManifest decodes a manifest from JSON or YAML, strictly (unknown
// fields are errors), and validates it.
func ParseManifest(data []byte) (*Manifest, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("manifest: empty")
	}
	if trimmed[0] != '{' {
		var err error
		if trimmed, err = yamlToJSON(trimmed); err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if dec.More() {
		return nil, errors.New("manifest: trailing data after the JSON object")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

func yamlToJSON(data []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("yaml: top level is not a mapping")
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	return out, nil
}

// Validate checks every field and cross-reference of the manifest. It
// reports all problems at once, joined.
func (m *Manifest) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if m.ABI != ABIVersion {
		bad("abi %d is not supported (this host speaks abi %d)", m.ABI, ABIVersion)
	}
	if !nameRE.MatchString(m.Name) {
		bad("name %q: want 2-64 lower-case letters, digits and dashes, starting with a letter", m.Name)
	}
	if _, err := ParseSemver(m.Version); err != nil {
		bad("version: %v", err)
	}
	if m.Wasm.File == "" || strings.ContainsAny(m.Wasm.File, `/\`) || m.Wasm.File == "." || m.Wasm.File == ".." {
		bad("wasm.file %q: want a plain file name", m.Wasm.File)
	}
	if m.Wasm.SHA256 != "" && !sha256RE.MatchString(m.Wasm.SHA256) {
		bad("wasm.sha256 %q: want 64 lower-case hex digits", m.Wasm.SHA256)
	}
	if len(m.Tools)+len(m.Hooks)+len(m.Skills) == 0 {
		bad("declares no tools, hooks or skills")
	}
	exports := map[string]string{}
	useExport := func(what, export string) {
		if !exportRE.MatchString(export) {
			bad("%s: export %q is not a valid identifier", what, export)
			return
		}
		if strings.HasPrefix(export, "livehat_") || strings.HasPrefix(export, "_") {
			bad("%s: export %q uses a reserved prefix", what, export)
		}
		if prev, ok := exports[export]; ok {
			bad("%s: export %q is already used by %s", what, export, prev)
		}
		exports[export] = what
	}
	for i, t := range m.Tools {
		what := fmt.Sprintf("tools[%d] %q", i, t.Name)
		if !exportRE.MatchString(t.Name) {
			bad("%s: name is not a valid identifier", what)
		}
		if strings.TrimSpace(t.Description) == "" {
			bad("%s: description is empty", what)
		}
		useExport(what, t.ExportName())
		if err := checkSchema(t.Parameters); err != nil {
			bad("%s: parameters: %v", what, err)
		}
	}
	for i, h := range m.Hooks {
		what := fmt.Sprintf("hooks[%d] %q", i, h.Name)
		if !exportRE.MatchString(h.Name) {
			bad("%s: name is not a valid identifier", what)
		}
		if !h.Event.Valid() {
			bad("%s: unknown event %q", what, h.Event)
		}
		switch h.OnFailure {
		case "", harness.FailOpen, harness.FailClosed:
		default:
			bad("%s: on_failure %q (want fail_open or fail_closed)", what, h.OnFailure)
		}
		if len(h.Config) > 0 && !json.Valid(h.Config) {
			bad("%s: config is not valid JSON", what)
		}
		useExport(what, h.ExportName())
	}
	for i, s := range m.Skills {
		what := fmt.Sprintf("skills[%d] %q", i, s.ID)
		if !nameRE.MatchString(s.ID) && !exportRE.MatchString(s.ID) {
			bad("%s: id is not a valid identifier", what)
		}
		switch s.Kind {
		case "", harness.SkillReply, harness.SkillStrategy:
		default:
			bad("%s: kind %q (want reply or strategy)", what, s.Kind)
		}
		if strings.TrimSpace(s.Description) == "" {
			bad("%s: description is empty", what)
		}
		useExport(what, s.ExportName())
	}
	seenPerm := map[Permission]bool{}
	for _, p := range m.Permissions {
		if !knownPermission(p.Name) {
			bad("permission %q is unknown (want one of %v)", p.Name, Permissions())
		}
		if seenPerm[p.Name] {
			bad("permission %q is requested twice", p.Name)
		}
		seenPerm[p.Name] = true
		if strings.TrimSpace(p.Reason) == "" {
			bad("permission %q: reason is empty (operators see it before they install)", p.Name)
		}
	}
	l := m.Limits
	switch {
	case l.MemoryPages > MaxMemoryPages:
		bad("limits.memory_pages %d is over the maximum %d", l.MemoryPages, MaxMemoryPages)
	case l.MemoryPages != 0 && l.MemoryPages < 2:
		bad("limits.memory_pages %d is too small", l.MemoryPages)
	}
	if l.TimeoutMS < 0 || time.Duration(l.TimeoutMS)*time.Millisecond > MaxTimeout {
		bad("limits.timeout_ms %d is outside 1..%d", l.TimeoutMS, MaxTimeout.Milliseconds())
	}
	if l.MaxInputBytes < 0 || l.MaxInputBytes > MaxPayloadBytes {
		bad("limits.max_input_bytes %d is outside 1..%d", l.MaxInputBytes, MaxPayloadBytes)
	}
	if l.MaxOutputBytes < 0 || l.MaxOutputBytes > MaxPayloadBytes {
		bad("limits.max_output_bytes %d is outside 1..%d", l.MaxOutputBytes, MaxPayloadBytes)
	}
	if l.Instances < 0 || l.Instances > MaxInstances {
		bad("limits.instances %d is outside 1..%d", l.Instances, MaxInstances)
	}
	if l.KVBytes < 0 || l.KVBytes > MaxKVBytes {
		bad("limits.kv_bytes %d is outside 1..%d", l.KVBytes, MaxKVBytes)
	}
	for k := range m.Config {
		if k == "" || len(k) > 256 {
			bad("config key %q: want 1-256 bytes", k)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("manifest %q: %w", m.Name, errors.Join(errs...))
	}
	return nil
}

func knownPermission(p Permission) bool {
	for _, k := range Permissions() {
		if p == k {
			return true
		}
	}
	return false
}

// checkSchema compiles a JSON Schema so that a broken one fails at install,
// not on the first call.
func checkSchema(raw json.RawMessage) error {
	_, err := compileSchema(raw)
	return err
}

func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("missing (want a JSON Schema object)")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errors.New("not a JSON object")
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("tool.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("tool.json")
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ExportName returns the export implementing the tool.
func (t ToolSpec) ExportName() string {
	if t.Export != "" {
		return t.Export
	}
	return t.Name
}

// ExportName returns the export implementing the hook.
func (h HookSpec) ExportName() string {
	if h.Export != "" {
		return h.Export
	}
	return h.Name
}

// ExportName returns the export implementing the skill.
func (s SkillSpec) ExportName() string {
	if s.Export != "" {
		return s.Export
	}
	return s.ID
}

// Kinds returns the kinds the plugin implements, in the order tool, hook, skill.
func (m *Manifest) Kinds() []Kind {
	var ks []Kind
	if len(m.Tools) > 0 {
		ks = append(ks, KindTool)
	}
	if len(m.Hooks) > 0 {
		ks = append(ks, KindHook)
	}
	if len(m.Skills) > 0 {
		ks = append(ks, KindSkill)
	}
	return ks
}

// Declared lists everything the manifest declares as KIND:NAME (such as
// "tool:lookup_product"), tools first, then hooks, then skills.
func (m *Manifest) Declared() []string {
	var out []string
	for _, t := range m.Tools {
		out = append(out, string(KindTool)+":"+t.Name)
	}
	for _, h := range m.Hooks {
		out = append(out, string(KindHook)+":"+h.Name)
	}
	for _, s := range m.Skills {
		out = append(out, string(KindSkill)+":"+s.ID)
	}
	return out
}

// Has reports whether the manifest requests permission p.
func (m *Manifest) Has(p Permission) bool {
	for _, r := range m.Permissions {
		if r.Name == p {
			return true
		}
	}
	return false
}

// Export returns the export that implements the named tool, hook or skill.
func (m *Manifest) Export(kind Kind, name string) (string, bool) {
	switch kind {
	case KindTool:
		for _, t := range m.Tools {
			if t.Name == name {
				return t.ExportName(), true
			}
		}
	case KindHook:
		for _, h := range m.Hooks {
			if h.Name == name {
				return h.ExportName(), true
			}
		}
	case KindSkill:
		for _, s := range m.Skills {
			if s.ID == name {
				return s.ExportName(), true
			}
		}
	}
	return "", false
}

// HarnessTools returns the plugin's tools as harness tools bound to it.
func (m *Manifest) HarnessTools() []harness.Tool {
	out := make([]harness.Tool, len(m.Tools))
	for i, t := range m.Tools {
		out[i] = harness.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters,
			Plugin: m.Name, Export: t.ExportName()}
	}
	return out
}

// HarnessHooks returns the plugin's hooks as harness hooks bound to it.
func (m *Manifest) HarnessHooks() []harness.Hook {
	out := make([]harness.Hook, len(m.Hooks))
	for i, h := range m.Hooks {
		policy := h.OnFailure
		if policy == "" {
			policy = harness.FailOpen
		}
		out[i] = harness.Hook{Name: h.Name, Event: h.Event, Plugin: m.Name, Export: h.ExportName(),
			OnFailure: policy, Config: h.Config}
	}
	return out
}

// HarnessSkills returns the plugin's skills as harness skills whose
// content the plugin computes; Instructions holds the fallback text.
func (m *Manifest) HarnessSkills() []harness.Skill {
	out := make([]harness.Skill, len(m.Skills))
	for i, s := range m.Skills {
		kind := s.Kind
		if kind == "" {
			kind = harness.SkillReply
		}
		out[i] = harness.Skill{ID: s.ID, Kind: kind, Description: s.Description, Version: m.Version,
			Instructions: s.Text, Plugin: m.Name, Export: s.ExportName()}
	}
	return out
}

// SHA256Hex returns the lower-case hex sha256 of data, the form
// manifests pin modules with.
func SHA256Hex(data []byte) string {
	sum := sha256Sum(data)
	return hex.EncodeToString(sum[:])
}
