package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// DanmakuLine is one line of a recorded danmaku log (JSONL): seconds since
// the start of the recording, the viewer and the text.
type DanmakuLine struct {
	T      float64 `json:"t"`
	Viewer string  `json:"viewer"`
	Text   string  `json:"text"`
}

// ReplayResult counts what a replay did.
type ReplayResult struct {
	Lines    int `json:"lines"`
	Sent     int `json:"sent"`
	Rejected int `json:"rejected"`
}

// Replay plays a recorded danmaku log into a session, at real speed
// (speed 1), accelerated (speed 10 plays ten times faster) or as fast as
// possible (speed 0). Lines must be in time order. Messages the session
// rejects (empty, oversized) are counted, not fatal; a malformed line is
// an error naming its number.
func Replay(ctx context.Context, s *Session, log io.Reader, speed float64) (ReplayResult, error) {
	var res ReplayResult
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	start := time.Now()
	prev := 0.0
	for sc.Scan() {
		res.Lines++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l DanmakuLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return res, fmt.Errorf("runtime: replay line %d: %w", res.Lines, err)
		}
		if l.T < prev {
			return res, fmt.Errorf("runtime: replay line %d: time %.3f s goes back before %.3f s", res.Lines, l.T, prev)
		}
		prev = l.T
		if speed > 0 {
			due := start.Add(time.Duration(l.T / speed * float64(time.Second)))
			if wait := time.Until(due); wait > 0 {
				select {
				case <-ctx.Done():
					return res, ctx.Err()
				case <-time.After(wait):
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := s.Submit(Message{Viewer: l.Viewer, Text: l.Text}); err != nil {
			res.Rejected++
			continue
		}
		res.Sent++
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("runtime: replay line %d: %w", res.Lines+1, err)
	}
	return res, nil
}
