package sft

import (
	"context"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/internal/testfixture"
	"github.com/livehat/livehat/trainer/liveroom"
)

func TestFlawedReply(t *testing.T) {
	lookup := []harness.Message{{Role: harness.RoleTool, Name: "product_lookup", Content: `{"name":"悦清日常行李箱","price":"206.50","attributes":{"材质":"PP塑料"}}`}}
	tests := []struct {
		name  string
		lang  liveroom.Lang
		msgs  []harness.Message
		reply string
		want  string
	}{
		{"a number off", liveroom.LangZH, lookup, "现在206.50元，原价295元。", "现在213.5元，原价295元。"},
		{"the price for a material", liveroom.LangZH, lookup, "材质是PP塑料。", "悦清日常行李箱直播间价格206.50元。"},
		{"the price in English", liveroom.LangEN, lookup, "It is PP plastic.", "It is 206.50 yuan in the live room."},
		{"nothing to get wrong", liveroom.LangEN, nil, "Thanks for watching!", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := flawedReply(liveroom.Question{Lang: tt.lang}, tt.msgs, tt.reply); got != tt.want {
				t.Errorf("flawedReply(%q) = %q, want %q", tt.reply, got, tt.want)
			}
		})
	}
}

// TestFeedbackDataShowsTheHooksFeedback builds shop rooms with every
// question given a flawed first reply: the kept ones show the flawed
// reply (read, not trained), the retry as the demo harness's hooks word it
// through the runtime, and the right reply (trained). A share without a
// critic is refused.
func TestFeedbackDataShowsTheHooksFeedback(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WASM plugins; skipped with -short")
	}
	cfg := DataConfig{Seed: 3, Rooms: 2, Questions: 8, Room: liveroom.RoomConfig{MinItems: 1, MaxItems: 3, Variety: 5}, ShopShare: 1, FeedbackShare: 1}
	if _, _, err := Build(context.Background(), demo(t), cfg); err == nil || !strings.Contains(err.Error(), "needs a critic") {
		t.Fatalf("a share without a critic: %v", err)
	}
	cfg.Critic = NewHookCritic(testfixture.DemoSandbox(t, nil))
	trajs, st, err := Build(context.Background(), demo(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Feedback == 0 {
		t.Fatalf("no trajectory with feedback among %d (%+v)", len(trajs), st)
	}
	for _, tr := range trajs {
		if !tr.Feedback {
			continue
		}
		n := len(tr.Messages)
		flawed, retry, right := tr.Messages[n-3], tr.Messages[n-2], tr.Messages[n-1]
		if flawed.Role != harness.RoleAssistant || flawed.Train == nil || *flawed.Train {
			t.Errorf("%s: the flawed reply %+v must be read, not trained", tr.ID, flawed)
		}
		if retry.Role != harness.RoleUser || !strings.Contains(retry.Content, "rejected your last reply") ||
			!strings.Contains(retry.Content, "Your reply") {
			t.Errorf("%s: the retry %q is not the hooks' feedback as the harness words it", tr.ID, retry.Content)
		}
		if right.Role != harness.RoleAssistant || right.Train != nil || right.Content == flawed.Content {
			t.Errorf("%s: the right reply %+v must be trained and differ from %q", tr.ID, right, flawed.Content)
		}
	}
}
