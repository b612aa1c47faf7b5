package console

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/livehat/livehat/runtime"
)

// TestChatWireFormat pins the bytes of the completion objects: the keys
// in the order OpenAI clients have always received them from the console
// (sorted, as encoding/json writes maps), null finish reasons until the
// last chunk, and the role and empty content where they were sent.
func TestChatWireFormat(t *testing.T) {
	trace := turnTrace{ID: "t1", Session: "sess", Source: "api", Reply: "ok"}
	traceJSON, err := json.Marshal(trace)
	if err != nil {
		t.Fatal(err)
	}
	const tail = `"model":"stream:s1","object":"chat.completion.chunk"}`
	newWriter := func(buf *bytes.Buffer) *chunkWriter {
		return &chunkWriter{w: bufio.NewWriter(buf), created: 1700000000, model: "stream:s1"}
	}
	tests := []struct {
		name string
		emit func(cw *chunkWriter)
		want string
	}{
		{"first spoken chunk", func(cw *chunkWriter) {
			cw.write(cw.spokenChunk(runtime.Event{Turn: "t1", Text: "Hi <b>"}))
		}, `{"choices":[{"delta":{"content":"Hi \u003cb\u003e","role":"assistant"},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-t1",` + tail},
		{"later chunk with actions", func(cw *chunkWriter) {
			cw.spokenChunk(runtime.Event{Turn: "t1", Text: "Hi."})
			cw.write(cw.spokenChunk(runtime.Event{Turn: "t1", Text: "There.", Actions: []runtime.AvatarAction{{Kind: "show_item", Item: "p1"}}}))
		}, `{"choices":[{"delta":{"content":" There."},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-t1","livehat":{"actions":[{"kind":"show_item","item_id":"p1"}]},` + tail},
		{"dropped", func(cw *chunkWriter) {
			cw.write(cw.failed("the message was dropped: full", true))
		}, `{"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":"error","index":0}],"created":1700000000,"id":"","livehat":{"error":"the message was dropped: full"},` + tail},
		{"deadline", func(cw *chunkWriter) {
			cw.spokenChunk(runtime.Event{Turn: "t1", Text: "Hi."})
			cw.write(cw.failed("the turn did not finish in time", false))
		}, `{"choices":[{"delta":{},"finish_reason":"error","index":0}],"created":1700000000,"id":"chatcmpl-t1","livehat":{"error":"the turn did not finish in time"},` + tail},
		{"last after speech", func(cw *chunkWriter) {
			cw.spokenChunk(runtime.Event{Turn: "t1", Text: "Hi."})
			cw.write(cw.last("stop", &completionLivehat{Stream: "s1", Outcome: "replied", Turn: trace}))
		}, `{"choices":[{"delta":{},"finish_reason":"stop","index":0}],"created":1700000000,"id":"chatcmpl-t1","livehat":{"stream":"s1","outcome":"replied","turn":` + string(traceJSON) + `},` + tail},
		{"last with nothing said", func(cw *chunkWriter) {
			cw.id = "chatcmpl-t1"
			cw.write(cw.last("content_filter", &completionLivehat{Stream: "s1", Outcome: "denied", Turn: trace}))
		}, `{"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":"content_filter","index":0}],"created":1700000000,"id":"chatcmpl-t1","livehat":{"stream":"s1","outcome":"denied","turn":` + string(traceJSON) + `},` + tail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.emit(newWriter(&buf))
			if got, want := buf.String(), "data: "+tt.want+"\n\n"; got != want {
				t.Errorf("event\n got %s\nwant %s", got, want)
			}
		})
	}

	t.Run("completion", func(t *testing.T) {
		got, err := json.Marshal(chatCompletionResponse{
			Choices: []chatChoice{{Message: assistantMessage{Role: "assistant", Content: "ok"}, FinishReason: "stop"}},
			Created: 1700000000, ID: "chatcmpl-t1", Model: "stream:s1", Object: "chat.completion",
			Livehat: completionLivehat{Stream: "s1", Outcome: "replied", Turn: trace},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := `{"choices":[{"index":0,"message":{"content":"ok","role":"assistant"},"finish_reason":"stop"}],"created":1700000000,"id":"chatcmpl-t1",` +
			`"livehat":{"stream":"s1","outcome":"replied","turn":` + string(traceJSON) + `},"model":"stream:s1","object":"chat.completion"}`
		if string(got) != want {
			t.Errorf("completion\n got %s\nwant %s", got, want)
		}
	})
}
