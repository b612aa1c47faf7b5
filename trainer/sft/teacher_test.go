package sft

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/livehat/livehat/model/chat"
)

// teacherServer is an OpenAI-compatible chat server whose model answers
// each request with the next assistant turn of the matching trajectory
// (found by its system prompt and question), rewritten by edit.
func teacherServer(t *testing.T, trajs []Trajectory, edit func(chat.Message) chat.Message) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []chat.Message `json:"messages"`
			Tools    []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 || len(req.Tools) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		turns := 0
		for _, m := range req.Messages {
			if m.Role == chat.RoleAssistant {
				turns++
			}
		}
		for _, tr := range trajs {
			if tr.Messages[0].Content != req.Messages[0].Content || tr.Messages[1].Content != req.Messages[1].Content {
				continue
			}
			var answers []chat.Message
			for _, m := range tr.Messages {
				if m.Role == chat.RoleAssistant {
					answers = append(answers, edit(m.Message))
				}
			}
			// OpenAI sends arguments as a string holding JSON.
			ans := answers[turns]
			msg := map[string]any{"role": "assistant", "content": ans.Content}
			var calls []any
			for i, c := range ans.ToolCalls {
				calls = append(calls, map[string]any{"id": "call" + string(rune('0'+i)), "type": "function",
					"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)}})
			}
			if calls != nil {
				msg["tool_calls"] = calls
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "teacher",
				"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}}})
			return
		}
		http.Error(w, `{"error":{"message":"unknown conversation"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRemoteTeacher runs a model behind an OpenAI-compatible server through
// the tool loop under base and variant harnesses: a teacher that answers
// like the expert yields the expert's trajectories (it is asked the same
// stream context and memory, or the server would not know the
// conversation), tools served through the inverse mappings; one that
// states a wrong price is rejected by the grader.
func TestRemoteTeacher(t *testing.T) {
	base := demo(t)
	cfg := smallData(true)
	cfg.RetryShare = 0 // corrections are planted after the teacher answers
	want, _, err := Build(context.Background(), base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	same := func(m chat.Message) chat.Message { return m }
	cfg.Teacher, cfg.TeacherModel = teacherServer(t, want, same).URL, "teacher"
	got, st, err := Build(context.Background(), base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if string(a) != string(b) || st.Variants == 0 {
		t.Fatalf("remote teacher trajectories differ from the expert's (%d vs %d, %d under variants)", len(got), len(want), st.Variants)
	}

	wrongPrice := func(m chat.Message) chat.Message {
		if len(m.ToolCalls) == 0 && m.Content != "" {
			m.Content = "It costs 1 yuan, 100% effective!"
		}
		return m
	}
	// Rejected answers never enter the room's memory, so the wrong-price
	// run would remember other questions than the expert's: without memory
	// both runs ask the same conversations.
	cfg.Teacher, cfg.MemoryShare = "", 0
	want, _, err = Build(context.Background(), base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Teacher = teacherServer(t, want, wrongPrice).URL
	_, st, err = Build(context.Background(), base, cfg)
	if err == nil || !strings.Contains(err.Error(), "no trajectory survived") || st.Rejected != len(want) {
		t.Errorf("a teacher stating wrong facts: %v, %d of %d rejected", err, st.Rejected, len(want))
	}
}
