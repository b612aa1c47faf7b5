package command

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/plugins"
)

// pluginUsage lists the plugin subcommands.
const pluginUsage = `Usage: livehat plugin COMMAND [flags]

Commands:
  build DIR                       compile the Go plugin in DIR to its .wasm and check it in the sandbox
  inspect FILE                    show manifest, exports, imports, size and hash (FILE: .lhp, .wasm or DIR)
  test FILE --call KIND:NAME --input JSON [--trust FILE.pub]
                                  run one call in the real sandbox; print the result and the time
  pack DIR [--key FILE --key-id ID]
                                  build, pin, sign and write NAME-VERSION.lhp, the archive the console accepts
  install FILE --data DIR [--trust FILE.pub]
                                  verify a package and install it into DIR/plugins (what the console serves)
  keygen --out FILE               make an ed25519 signing key (FILE, FILE.pub) and print its key id and public key

Run 'livehat plugin COMMAND -h' for a command's flags.
`

// Plugin runs "livehat plugin build|inspect|test|pack|install|keygen".
func Plugin(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, pluginUsage)
		if len(args) == 0 {
			return usagef("plugin: no command")
		}
		return nil
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "build":
		return pluginBuild(ctx, rest, stdout, stderr)
	case "inspect":
		return pluginInspect(ctx, rest, stdout, stderr)
	case "test":
		return pluginTest(ctx, rest, stdin, stdout, stderr)
	case "pack":
		return pluginPack(ctx, rest, stdout, stderr)
	case "install":
		return pluginInstall(ctx, rest, stdout, stderr)
	case "keygen":
		return pluginKeygen(rest, stdout, stderr)
	}
	fmt.Fprint(stderr, pluginUsage)
	return usagef("plugin: unknown command %q", cmd)
}

// keyIDFromFile is the name a key is signed and trusted under when no
// name is given: the file's base name less ".pub" and then less its
// extension, so that "keygen --out team.key" signs (pack --key team.key)
// and is trusted (--trust team.key.pub) as "team".
func keyIDFromFile(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".pub")
	return strings.TrimSuffix(name, filepath.Ext(name))
}

// trustFlags are the --trust and --trust-id flags of the commands that
// verify a signed package.
type trustFlags struct{ file, id *string }

// addTrustFlags defines --trust and --trust-id on fs.
func addTrustFlags(fs *flag.FlagSet) trustFlags {
	return trustFlags{
		file: fs.String("trust", "", "public key `file` (hex, keygen's FILE.pub) to verify a signed package with"),
		id:   fs.String("trust-id", "", "name of that key; default the file's name less .pub and its extension"),
	}
}

// keys reads the trusted key, if one was given.
func (f trustFlags) keys() (map[string]ed25519.PublicKey, error) {
	trusted := map[string]ed25519.PublicKey{}
	if *f.file == "" {
		return trusted, nil
	}
	b, err := os.ReadFile(*f.file)
	if err != nil {
		return nil, err
	}
	pub, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%s: want a hex ed25519 public key (keygen's FILE.pub)", *f.file)
	}
	id := *f.id
	if id == "" {
		id = keyIDFromFile(*f.file)
	}
	trusted[id] = pub
	return trusted, nil
}

// trustingHost reads the keys the trust flags name and returns a host
// that trusts them, with the keys (untrustedHint reads them).
func trustingHost(ctx context.Context, cacheDir string, trust trustFlags) (*plugins.Host, map[string]ed25519.PublicKey, error) {
	trusted, err := trust.keys()
	if err != nil {
		return nil, nil, err
	}
	cfg := plugins.NewHostConfig().WithCacheDir(cacheDir)
	for id, pub := range trusted {
		cfg = cfg.WithTrustedKey(id, pub)
	}
	h, err := plugins.NewHost(ctx, cfg)
	return h, trusted, err
}

// untrustedHint adds the flag to use when a signed package was refused
// because no key was given.
func untrustedHint(err error, pkg *plugins.Package, trusted map[string]ed25519.PublicKey) error {
	if errors.Is(err, plugins.ErrSignature) && pkg.Signature != nil && len(trusted) == 0 {
		return fmt.Errorf("%w (pass --trust with the public key file of %q)", err, pkg.Signature.KeyID)
	}
	return err
}

// pluginBuild runs "livehat plugin build DIR": it compiles the plugin and
// loads it in the sandbox, as the console would.
func pluginBuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plugin build", "DIR", stderr)
	cache := fs.String("cache", plugins.DefaultCacheDir(), "compilation cache `dir`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("plugin build: want one DIR")
	}
	start := time.Now()
	pkg, err := plugins.BuildDir(ctx, pos[0], stderr)
	if err != nil {
		return err
	}
	built := time.Since(start)
	h, err := plugins.NewHost(ctx, plugins.NewHostConfig().WithCacheDir(*cache))
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	start = time.Now()
	p, err := h.Load(ctx, pkg)
	if err != nil {
		return fmt.Errorf("plugin build: the module built but the sandbox refuses it: %w", err)
	}
	defer p.Close(ctx)
	fmt.Fprintf(stdout, "built %s (%d bytes, sha256 %s) in %v; loaded in the sandbox in %v\n",
		filepath.Join(pos[0], pkg.Manifest.Wasm.File), len(pkg.Wasm), pkg.Manifest.Wasm.SHA256,
		built.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "%s@%s: %s\n", pkg.Manifest.Name, pkg.Manifest.Version, strings.Join(pkg.Manifest.Declared(), ", "))
	return nil
}

// readAny reads a package from a .lhp archive, a plugin directory, or a
// .wasm file with its manifest next to it.
func readAny(path string) (*plugins.Package, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case st.IsDir():
		return plugins.ReadDir(path)
	case strings.HasSuffix(path, plugins.PackageExt):
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return plugins.ReadPackage(data)
	case strings.HasSuffix(path, ".wasm"):
		pkg, err := plugins.ReadDir(filepath.Dir(path))
		if err != nil {
			return nil, err
		}
		if want := filepath.Base(path); pkg.Manifest.Wasm.File != want {
			return nil, fmt.Errorf("%s: the manifest next to it names module %q", path, pkg.Manifest.Wasm.File)
		}
		return pkg, nil
	}
	return nil, usagef("%s: want a %s package, a .wasm file or a plugin directory", path, plugins.PackageExt)
}

// pluginInspect runs "livehat plugin inspect FILE".
func pluginInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plugin inspect", "FILE", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("plugin inspect: want one FILE")
	}
	pkg, err := readAny(pos[0])
	if err != nil {
		return err
	}
	in, err := plugins.Inspect(ctx, pkg)
	if err != nil {
		return fmt.Errorf("plugin inspect %s: %w", pos[0], err)
	}
	if in.SignedBy != "" {
		in.SignedBy += " (not verified: inspect trusts no keys)"
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "plugin\t%s@%s (abi %d)\n", in.Name, in.Version, in.ABI)
	if in.Description != "" {
		fmt.Fprintf(w, "description\t%s\n", in.Description)
	}
	fmt.Fprintf(w, "declares\t%s\n", strings.Join(in.Declares, ", "))
	for _, p := range in.Permissions {
		fmt.Fprintf(w, "permission\t%s: %s\n", p.Name, p.Reason)
	}
	l := in.Limits
	fmt.Fprintf(w, "limits\t%d pages (%d MiB), %d ms, in %d B, out %d B, %d instances, kv %d B\n",
		l.MemoryPages, l.MemoryPages/16, l.TimeoutMS, l.MaxInputBytes, l.MaxOutputBytes, l.Instances, l.KVBytes)
	fmt.Fprintf(w, "module\t%d bytes, sha256 %s, pinned %v, memory min %d pages\n", in.Size, in.SHA256, in.Pinned, in.MemoryPages)
	if in.SignedBy != "" {
		fmt.Fprintf(w, "signed by\t%s\n", in.SignedBy)
	}
	fmt.Fprintf(w, "imports\t%s\n", strings.Join(in.Imports, ", "))
	fmt.Fprintf(w, "exports\t%s\n", strings.Join(in.Exports, ", "))
	for _, p := range in.Problems {
		fmt.Fprintf(w, "PROBLEM\t%s\n", p)
	}
	return w.Flush()
}

// pluginTest runs "livehat plugin test FILE --call KIND:NAME": one call,
// or --repeat of them, in the real sandbox.
func pluginTest(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("plugin test", "FILE --call KIND:NAME --input JSON", stderr)
	call := fs.String("call", "", "what to call: `KIND:NAME` with KIND tool, hook or skill")
	input := fs.String("input", "", "input `JSON`; @FILE reads a file, - reads stdin; default {} (hooks: an event of the hook)")
	catalog := fs.String("catalog", "", "stream catalog `file` (JSON) behind livehat_catalog_lookup")
	now := fs.String("now", "", "stream clock as RFC 3339 `time`; default the real time")
	repeat := fs.Int("repeat", 1, "run the call `n` times and report p50/p99")
	trust := addTrustFlags(fs)
	cache := fs.String("cache", plugins.DefaultCacheDir(), "compilation cache `dir`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *call == "" {
		return usagef("plugin test: want FILE and --call KIND:NAME")
	}
	kindText, name, ok := strings.Cut(*call, ":")
	kind, err := plugins.ParseKind(kindText)
	if !ok || err != nil || name == "" {
		return usagef("plugin test: --call %q: want KIND:NAME, KIND one of tool, hook, skill", *call)
	}
	if *repeat < 1 {
		return usagef("plugin test: --repeat must be at least 1")
	}
	pkg, err := readAny(pos[0])
	if err != nil {
		return err
	}
	in, err := readInput(*input, stdin)
	if err != nil {
		return err
	}
	if in == nil {
		in = defaultInput(pkg.Manifest, kind, name)
	}
	env, err := testEnv(*catalog, *now, stderr)
	if err != nil {
		return err
	}
	h, trusted, err := trustingHost(ctx, *cache, trust)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	loadStart := time.Now()
	p, err := h.Load(ctx, pkg)
	if err != nil {
		return untrustedHint(err, pkg, trusted)
	}
	defer p.Close(ctx)
	loaded := time.Since(loadStart)
	var (
		result []byte
		times  []time.Duration
	)
	for range *repeat {
		start := time.Now()
		result, err = runKind(ctx, p, env, kind, name, in)
		times = append(times, time.Since(start))
		if err != nil {
			return err
		}
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, result, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(result)
	}
	fmt.Fprintln(stdout, pretty.String())
	slices.Sort(times)
	if probe, err := p.ProbeInstance(ctx); err == nil {
		fmt.Fprintf(stderr, "instance: starts in %v, %.1f MiB of linear memory\n", probe.Start.Round(100*time.Microsecond), float64(probe.MemoryBytes)/(1<<20))
	}
	label := p.Name() + "@" + p.Version()
	if len(times) == 1 {
		fmt.Fprintf(stderr, "%s %s: ok in %v (load %v)\n", label, *call, times[0], loaded.Round(time.Millisecond))
	} else {
		fmt.Fprintf(stderr, "%s %s: %d calls, p50 %v, p99 %v, max %v (load %v)\n", label, *call, len(times),
			times[len(times)/2], times[len(times)*99/100], times[len(times)-1], loaded.Round(time.Millisecond))
	}
	return nil
}

// runKind calls kind:name through the same checks the runtime uses and
// returns the result as JSON.
func runKind(ctx context.Context, p *plugins.Plugin, env plugins.HostEnv, kind plugins.Kind, name string, in []byte) ([]byte, error) {
	switch kind {
	case plugins.KindTool:
		return p.Tool(ctx, env, name, in)
	case plugins.KindHook:
		d, err := p.Hook(ctx, env, name, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(d)
	default:
		text, err := p.Skill(ctx, env, name, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]string{"text": text})
	}
}

// readInput reads --input: JSON as given, @FILE, or - for stdin; nil when
// it is empty.
func readInput(arg string, stdin io.Reader) ([]byte, error) {
	switch {
	case arg == "":
		return nil, nil
	case arg == "-":
		return io.ReadAll(io.LimitReader(stdin, plugins.MaxPayloadBytes))
	case strings.HasPrefix(arg, "@"):
		return os.ReadFile(arg[1:])
	}
	return []byte(arg), nil
}

// defaultInput is {} for tools, an event of the hook for hooks, and the
// skill's id for skills.
func defaultInput(m *plugins.Manifest, kind plugins.Kind, name string) []byte {
	switch kind {
	case plugins.KindHook:
		for _, h := range m.Hooks {
			if h.Name == name {
				b, _ := json.Marshal(plugins.HookInput{Event: h.Event, Config: h.Config})
				return b
			}
		}
	case plugins.KindSkill:
		b, _ := json.Marshal(plugins.SkillInput{Skill: name})
		return b
	}
	return []byte("{}")
}

// testEnv is the host environment of plugin test: the stream catalog of
// --catalog (empty without it), the clock of --now, and a debug log on
// stderr.
func testEnv(catalogPath, now string, stderr io.Writer) (*plugins.LocalEnv, error) {
	c := &catalog.Catalog{}
	if catalogPath != "" {
		data, err := os.ReadFile(catalogPath)
		if err != nil {
			return nil, err
		}
		if c, err = catalog.Parse(data); err != nil {
			return nil, fmt.Errorf("%s: %w", catalogPath, err)
		}
	}
	clock := time.Now
	if now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return nil, usagef("--now %q: %v", now, err)
		}
		clock = func() time.Time { return t }
	}
	return plugins.NewLocalEnv(c, newStderrLogger(stderr), clock), nil
}

// pluginPack runs "livehat plugin pack DIR": build (unless --no-build),
// pin, sign with --key, check in the sandbox and write the archive.
func pluginPack(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plugin pack", "DIR", stderr)
	out := fs.String("o", "", "output `file`; default DIR/NAME-VERSION"+plugins.PackageExt)
	keyFile := fs.String("key", "", "ed25519 signing key `file` (from keygen); unsigned without it")
	keyID := fs.String("key-id", "", "name of the signing key the host trusts; default the key file's name less its extension")
	noBuild := fs.Bool("no-build", false, "pack the module already in DIR instead of building it")
	cache := fs.String("cache", plugins.DefaultCacheDir(), "compilation cache `dir`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("plugin pack: want one DIR")
	}
	dir := pos[0]
	var pkg *plugins.Package
	if *noBuild {
		pkg, err = plugins.ReadDir(dir)
	} else {
		pkg, err = plugins.BuildDir(ctx, dir, stderr)
	}
	if err != nil {
		return err
	}
	pkg.Pin()
	cfg := plugins.NewHostConfig().WithCacheDir(*cache)
	if *keyFile != "" {
		key, err := readKey(*keyFile)
		if err != nil {
			return err
		}
		id := *keyID
		if id == "" {
			id = keyIDFromFile(*keyFile)
		}
		if err := pkg.Sign(id, key); err != nil {
			return err
		}
		cfg = cfg.WithTrustedKey(id, key.Public().(ed25519.PublicKey))
	}
	h, err := plugins.NewHost(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	p, err := h.Load(ctx, pkg)
	if err != nil {
		return fmt.Errorf("plugin pack: the sandbox refuses the plugin: %w", err)
	}
	p.Close(ctx)
	archive, err := pkg.Archive()
	if err != nil {
		return err
	}
	path := *out
	if path == "" {
		path = filepath.Join(dir, pkg.Manifest.Name+"-"+pkg.Manifest.Version+plugins.PackageExt)
	}
	if err := os.WriteFile(path, archive, 0o644); err != nil {
		return err
	}
	signed := "unsigned"
	if pkg.Signature != nil {
		signed = "signed by " + pkg.Signature.KeyID
	}
	fmt.Fprintf(stdout, "packed %s (%d bytes, module sha256 %s, %s)\n", path, len(archive), pkg.Manifest.Wasm.SHA256, signed)
	return nil
}

// pluginInstall runs "livehat plugin install FILE --data DIR".
func pluginInstall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plugin install", "FILE --data DIR", stderr)
	data := fs.String("data", "livehat-data", "data `dir` of the console")
	trust := addTrustFlags(fs)
	cache := fs.String("cache", plugins.DefaultCacheDir(), "compilation cache `dir`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("plugin install: want one FILE")
	}
	pkg, err := readAny(pos[0])
	if err != nil {
		return err
	}
	h, trusted, err := trustingHost(ctx, *cache, trust)
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	p, err := h.Load(ctx, pkg)
	if err != nil {
		return fmt.Errorf("plugin install: %w", untrustedHint(err, pkg, trusted))
	}
	p.Close(ctx)
	path, err := plugins.InstallToStore(*data, pkg, trusted)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "installed %s@%s into %s\n", pkg.Manifest.Name, pkg.Manifest.Version, path)
	return nil
}

// pluginKeygen runs "livehat plugin keygen --out FILE".
func pluginKeygen(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plugin keygen", "--out FILE", stderr)
	out := fs.String("out", "", "private key `file` to write (mode 0600); the public key goes to FILE.pub")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("plugin keygen: want --out FILE")
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, []byte(hex.EncodeToString(priv.Seed())+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(*out+".pub", []byte(hex.EncodeToString(pub)+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s.pub\nkey id %s (pack --key %s signs as it; --trust %s.pub and the console trust it under it)\npublic key %s\n",
		*out, *out, keyIDFromFile(*out), *out, *out, hex.EncodeToString(pub))
	return nil
}

// newStderrLogger logs everything a plugin logs, for plugin test.
func newStderrLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// readKey reads an ed25519 signing key as keygen writes it: a hex seed.
func readKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s: want a hex ed25519 seed (from livehat plugin keygen)", path)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
