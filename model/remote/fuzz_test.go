package remote

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// FuzzStreamParse feeds arbitrary bytes to the server-sent-events parser:
// it must never panic, must end with io.EOF or an error, and the assembled
// response's text must be what the deltas carried.
func FuzzStreamParse(f *testing.F) {
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	f.Add(": c\r\nevent: x\r\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":2,\"function\":{\"arguments\":\"{}\"}}]}}]}\r\n\r\n")
	f.Add("data: {\"error\": {\"message\": \"x\"}}\n\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-5}]}}]}\ndata: [DONE]\n")
	f.Fuzz(func(t *testing.T, body string) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		s := &Stream{body: io.NopCloser(strings.NewReader(body)), cancel: cancel, ctx: ctx, idleD: time.Minute}
		s.r = newReader(s.body)
		s.idle = time.AfterFunc(time.Minute, func() { cancel(errIdleTimeout) })
		defer s.Close()
		var text strings.Builder
		for range 10000 {
			d, err := s.Recv()
			if errors.Is(err, io.EOF) {
				resp, rerr := s.Response()
				if rerr == nil && resp.Message.Content != text.String() {
					t.Fatalf("response content %q, deltas carried %q", resp.Message.Content, text.String())
				}
				return
			}
			if err != nil {
				return
			}
			text.WriteString(d.Content)
		}
		t.Fatal("stream did not end")
	})
}
