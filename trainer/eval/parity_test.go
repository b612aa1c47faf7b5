package eval

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/harness/hsa"
	"github.com/livehat/livehat/runtime"
	"github.com/livehat/livehat/trainer/liveroom"
)

// TestRoomToolsMatchPlugins holds the live room's simulated tools to the
// storefront plugin the suites and the console serve: for every gold call
// of every question type in rooms of every size, the room's result must be
// byte for byte what the plugin returns over the room's exported catalog.
// SFT data is collected from the room's tools, so any difference is a skew
// between what the model is trained on and what it reads when it serves.
func TestRoomToolsMatchPlugins(t *testing.T) {
	sb := hookSandbox(t)
	ctx := context.Background()
	calls := 0
	for seed := uint64(1); seed <= 6; seed++ {
		room := liveroom.NewRoom(seed, liveroom.RoomConfig{MinItems: int(seed), MaxItems: int(seed) + 2})
		catalog, err := room.CatalogJSON()
		if err != nil {
			t.Fatal(err)
		}
		ps, err := sb.Plugins(catalog, nil)
		if err != nil {
			t.Fatal(err)
		}
		plugin := pluginTools{ctx: ctx, ps: ps, base: base(t)}
		for _, q := range room.Questions(seed, 60, liveroom.QuestionConfig{}) {
			for _, c := range q.Gold.Calls {
				if c.Name == liveroom.ToolLoadSkill {
					continue
				}
				want, err := plugin.CallTool(c.Name, c.Arguments)
				if err != nil {
					t.Fatalf("room %d %s: plugin %s%v: %v", seed, q.ID, c.Name, c.Arguments, err)
				}
				got, err := room.CallTool(c.Name, c.Arguments)
				if err != nil {
					t.Fatalf("room %d %s: room %s%v: %v", seed, q.ID, c.Name, c.Arguments, err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("room %d %s: %s%v\n room:   %s\n plugin: %s", seed, q.ID, c.Name, c.Arguments, got, want)
				}
				calls++
			}
		}
	}
	if calls < 200 {
		t.Fatalf("only %d gold calls compared", calls)
	}
}

// toolCalls are calls of every tool on every item of a room, in the ways
// viewers and models make them: by id, name, alias and link number, for
// every variant and a missing one, and for several quantities.
func toolCalls(room *liveroom.Room) []hsa.Call {
	var calls []hsa.Call
	add := func(name string, args map[string]any) { calls = append(calls, hsa.Call{Name: name, Arguments: args}) }
	for _, it := range room.Items {
		for _, q := range append([]string{it.ID, it.NameZH, "no such item"}, it.Aliases...) {
			add(liveroom.ToolProductLookup, map[string]any{"query": q})
		}
		if it.Link > 0 {
			for _, f := range []string{"%d号链接", "link %d", "%d号"} {
				add(liveroom.ToolProductLookup, map[string]any{"query": fmt.Sprintf(f, it.Link)})
			}
		}
		id := map[string]any{"item_id": it.ID}
		add(liveroom.ToolCheckStock, id)
		for _, v := range append([]liveroom.Variant{{Name: "no such variant"}}, it.Variants...) {
			add(liveroom.ToolCheckStock, map[string]any{"item_id": it.ID, "variant": v.Name})
		}
		for qty := 1; qty <= 4; qty++ {
			add(liveroom.ToolCouponCheck, map[string]any{"item_id": it.ID, "quantity": float64(qty)})
		}
		add(liveroom.ToolShippingPolicy, id)
		add(liveroom.ToolSendLink, id)
	}
	return calls
}

// TestRoomToolsMatchPluginsOnCatalogs extends TestRoomToolsMatchPlugins
// to rooms read from catalogs that state the schema's new facts: the
// example that uses every field, at times inside and outside its offers'
// windows, the catalogs of the transfer suite, and the shop family's
// training catalogs.
func TestRoomToolsMatchPluginsOnCatalogs(t *testing.T) {
	sb := hookSandbox(t)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "catalogs", "every-field.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	zone := time.FixedZone("CST", 8*3600)
	for _, now := range []time.Time{time.Date(2026, 11, 30, 12, 0, 0, 0, zone), time.Date(2026, 12, 12, 21, 0, 0, 0, zone)} {
		room, err := liveroom.RoomFromCatalog(c)
		if err != nil {
			t.Fatal(err)
		}
		room.Now = now
		ps, err := sb.Plugins(data, func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		compareTools(t, ctx, ps, base(t), room, toolCalls(room), now.Format(time.DateTime))
	}
	suite, err := OpenSuite(SuiteTransfer)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, it := range suite.Items {
		if seen[it.Room] {
			continue
		}
		seen[it.Room] = true
		room, doc, err := it.room()
		if err != nil {
			t.Fatal(err)
		}
		ps, err := sb.Plugins(doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		compareTools(t, ctx, ps, base(t), room, toolCalls(room), fmt.Sprintf("transfer catalog %d", it.Room))
	}
	// The shop family's training catalogs (every field kind), and the
	// shop questions' gold calls, which SFT data is collected from. Their
	// coupons and offers end in December 2026, so both sides read them at
	// one fixed time before every end: the wall clock would expire them
	// for the plugins and not for the room.
	shopNow := time.Date(2026, 11, 30, 12, 0, 0, 0, zone)
	for seed := uint64(1); seed <= 12; seed++ {
		room, err := liveroom.ShopRoom(seed, liveroom.ShopConfig{MinItems: int(seed), MaxItems: int(seed) + 4})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := room.CatalogJSON()
		if err != nil {
			t.Fatal(err)
		}
		room.Now = shopNow
		ps, err := sb.Plugins(doc, func() time.Time { return shopNow })
		if err != nil {
			t.Fatal(err)
		}
		calls := toolCalls(room)
		for _, q := range room.ShopQuestions(seed, 40) {
			for _, c := range q.Gold.Calls {
				if c.Name != liveroom.ToolLoadSkill {
					calls = append(calls, c)
				}
			}
		}
		compareTools(t, ctx, ps, base(t), room, calls, fmt.Sprintf("shop catalog %d", seed))
	}
}

// compareTools runs calls on the room and through the plugins and
// reports every difference.
func compareTools(t *testing.T, ctx context.Context, ps *runtime.PluginSet, h *harness.Harness, room *liveroom.Room, calls []hsa.Call, where string) {
	t.Helper()
	plugin := pluginTools{ctx: ctx, ps: ps, base: h}
	for _, c := range calls {
		want, perr := plugin.CallTool(c.Name, c.Arguments)
		got, rerr := room.CallTool(c.Name, c.Arguments)
		if (perr == nil) != (rerr == nil) || !bytes.Equal(got, want) {
			t.Errorf("%s: %s%v\n room:   %s (%v)\n plugin: %s (%v)", where, c.Name, c.Arguments, got, rerr, want, perr)
		}
	}
}
