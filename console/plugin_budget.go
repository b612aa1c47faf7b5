package console

import (
	"context"
	"fmt"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/livehat/livehat/console/store"
	"github.com/livehat/livehat/plugins"
)

// PluginMemory is the process-wide budget of plugin memory (issue #21,
// finding 3). A plugin version reserves its limits' instances × memory
// pages × 64 KiB: the most linear memory its instances may hold at once.
// The versions live sessions run (the active version of each enabled
// plugin) hold their reservations for as long as they run; a trial or an
// upload check holds one instance's while it runs. Installing, enabling,
// rolling back and trying a plugin are refused when they would take an
// organisation's plugins, or all organisations', over the budget. Zero
// fields take the defaults.
type PluginMemory struct {
	// Total bounds the reservations of all organisations together, in
	// bytes; default DefaultPluginMemoryTotal.
	Total int64
	// PerOrg bounds one organisation's reservations; default
	// DefaultPluginMemoryPerOrg.
	PerOrg int64
	// DeveloperPlugin bounds one plugin's reservation when a developer
	// account uploads, enables, rolls back or tries it; default
	// DefaultDeveloperPluginMemory. Operators are bounded by PerOrg.
	DeveloperPlugin int64
}

// Default plugin memory budget. The example plugins reserve 64 MiB or less
// each (4 instances of up to 256 pages); a plugin with the manifest's
// default limits reserves 128 MiB; one with the manifest's maximum limits
// (64 instances × 4,096 pages) would reserve 16 GiB.
const (
	DefaultPluginMemoryTotal     = 4 << 30
	DefaultPluginMemoryPerOrg    = 1 << 30
	DefaultDeveloperPluginMemory = 256 << 20
)

// wasmPageBytes is the size of one WebAssembly memory page.
const wasmPageBytes = 64 << 10

func (m PluginMemory) withDefaults() (PluginMemory, error) {
	for _, f := range []struct {
		name string
		v    *int64
		def  int64
	}{{"Total", &m.Total, DefaultPluginMemoryTotal}, {"PerOrg", &m.PerOrg, DefaultPluginMemoryPerOrg},
		{"DeveloperPlugin", &m.DeveloperPlugin, DefaultDeveloperPluginMemory}} {
		switch {
		case *f.v < 0:
			return m, fmt.Errorf("console: Config.PluginMemory.%s is negative (%d bytes)", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	return m, nil
}

// reservation is what a plugin version reserves, with the limits it comes
// from, for messages.
type reservation struct {
	bytes            int64
	instances, pages int
}

func reservationOf(l plugins.Limits) reservation {
	l = l.WithDefaults()
	return reservation{bytes: int64(l.Instances) * int64(l.MemoryPages) * wasmPageBytes, instances: l.Instances, pages: int(l.MemoryPages)}
}

// oneInstance is what a trial or an upload check holds: it makes one call
// (or one start-up) in one instance.
func (r reservation) oneInstance() reservation {
	return reservation{bytes: int64(r.pages) * wasmPageBytes, instances: 1, pages: r.pages}
}

func (r reservation) String() string {
	instances := "instances"
	if r.instances == 1 {
		instances = "instance"
	}
	return fmt.Sprintf("%s (%d %s × %d pages × 64 KiB)", sizeText(r.bytes), r.instances, instances, r.pages)
}

// sizeText writes a byte count in the largest binary unit it reaches.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return trimUnit(float64(n)/(1<<30), "GiB")
	case n >= 1<<20:
		return trimUnit(float64(n)/(1<<20), "MiB")
	case n >= 1<<10:
		return trimUnit(float64(n)/(1<<10), "KiB")
	}
	return fmt.Sprintf("%d bytes", n)
}

func trimUnit(v float64, unit string) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), unit)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// memoryBudget enforces PluginMemory. The running versions' reservations
// are read from the store at each check (a change is rare; the store is
// the truth, across restarts and servers); trials and checks in progress
// are counted here.
type memoryBudget struct {
	cfg   PluginMemory
	store *store.Store

	// mu makes a check and the change it admits one step, so that two
	// changes cannot each fit alone and together overrun the budget.
	mu sync.Mutex
	// held are the reservations of trials and checks in progress, by
	// organisation.
	held map[string]int64
}

func newMemoryBudget(cfg PluginMemory, st *store.Store) *memoryBudget {
	return &memoryBudget{cfg: cfg, store: st, held: map[string]int64{}}
}

// allowedFor refuses a plugin whose reservation is over what the role may
// give one plugin.
func (b *memoryBudget) allowedFor(role store.Role, what string, r reservation) error {
	if role == store.RoleDeveloper && r.bytes > b.cfg.DeveloperPlugin {
		return fieldError(fiber.StatusForbidden, "limits", fmt.Sprintf(
			"%s reserves %s; a developer account may give one plugin at most %s: lower limits.instances or limits.memory_pages, or ask an operator",
			what, r, sizeText(b.cfg.DeveloperPlugin)))
	}
	return nil
}

// usage is what the running versions and the trials in progress reserve:
// the organisation's and everyone's, leaving out the organisation's plugin
// named skip (whose reservation a change replaces).
func (b *memoryBudget) usage(ctx context.Context, orgID, skip string) (org, total int64, err error) {
	running, err := b.store.EnabledPlugins(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("console: plugin memory budget: %w", err)
	}
	for _, p := range running {
		if p.OrgID == orgID && p.Name == skip {
			continue
		}
		m, err := decodeManifest(p.Manifest)
		if err != nil {
			return 0, 0, fmt.Errorf("console: plugin memory budget: %s: %w", p.Name, err)
		}
		n := reservationOf(m.Limits).bytes
		total += n
		if p.OrgID == orgID {
			org += n
		}
	}
	for o, n := range b.held {
		total += n
		if o == orgID {
			org += n
		}
	}
	return org, total, nil
}

// fits refuses r when it would take the organisation's or everyone's
// reservations over the budget, with code, saying what it would take.
func (b *memoryBudget) fits(ctx context.Context, orgID, skip, what string, r reservation, code int, advice string) error {
	org, total, err := b.usage(ctx, orgID, skip)
	if err != nil {
		return err
	}
	switch {
	case org+r.bytes > b.cfg.PerOrg:
		return fieldError(code, "limits", fmt.Sprintf(
			"%s reserves %s: the organisation's plugins would reserve %s, over its plugin memory budget of %s (%s reserved without it); %s",
			what, r, sizeText(org+r.bytes), sizeText(b.cfg.PerOrg), sizeText(org), advice))
	case total+r.bytes > b.cfg.Total:
		return fieldError(code, "limits", fmt.Sprintf(
			"%s reserves %s: the plugins of all organisations would reserve %s, over the console's plugin memory budget of %s (%s reserved without it); %s",
			what, r, sizeText(total+r.bytes), sizeText(b.cfg.Total), sizeText(total), advice))
	}
	return nil
}

// admit runs change, a store change to the organisation's plugin named
// name, if what the plugin runs after it fits the budget; a refusal is a
// 409 naming it. running says, from the store before the change, what the
// plugin reserves after it (nil when it will not run); it is asked under
// the same lock as the change, so no other change comes between.
func (b *memoryBudget) admit(ctx context.Context, orgID, name, what string, running func() (*reservation, error), change func() error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, err := running()
	if err != nil {
		return err
	}
	if r != nil {
		if err := b.fits(ctx, orgID, name, what, *r, fiber.StatusConflict,
			"lower limits.instances or limits.memory_pages, or disable another plugin"); err != nil {
			return err
		}
	}
	return change()
}

// hold reserves r for a trial or a check of the organisation while it
// runs; release gives it back. A refusal is a 429: it fits once other
// trials end.
func (b *memoryBudget) hold(ctx context.Context, orgID, what string, r reservation) (release func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.fits(ctx, orgID, "", what, r, fiber.StatusTooManyRequests,
		"wait for trials and uploads in progress to finish, or disable a plugin"); err != nil {
		return nil, err
	}
	b.held[orgID] += r.bytes
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.held[orgID] -= r.bytes; b.held[orgID] == 0 {
				delete(b.held, orgID)
			}
		})
	}, nil
}
