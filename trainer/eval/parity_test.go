package eval

import (
	"bytes"
	"context"
	"testing"

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
