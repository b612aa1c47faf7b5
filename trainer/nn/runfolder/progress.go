package runfolder

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Progress reports a run's steps: on a terminal one line redrawn in place
// (a bar, the step, the ETA and the latest numbers), elsewhere (a log file,
// a pipe, a test buffer) one line per step.
type Progress struct {
	w           io.Writer
	start, step int
	total       int
	began       time.Time
	terminal    bool
}

// NewProgress starts reporting a run that resumes at step start (0 for a
// new one) and ends at step total.
func NewProgress(w io.Writer, start, total int) *Progress {
	return &Progress{w: w, start: start, total: total, began: time.Now(), terminal: isTerminal(w)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Step reports that step (counted from 1) is done; summary holds the
// latest numbers ("loss 1.23  reward 0.41").
func (p *Progress) Step(step int, summary string) {
	p.step = step
	done := step - p.start
	var eta time.Duration
	if done > 0 {
		eta = time.Duration(float64(time.Since(p.began)) / float64(done) * float64(p.total-step)).Round(time.Second)
	}
	if !p.terminal {
		fmt.Fprintf(p.w, "step %d/%d  %s  ETA %s\n", step, p.total, summary, eta)
		return
	}
	const width = 24
	fill := width * step / max(p.total, 1)
	bar := strings.Repeat("#", fill) + strings.Repeat(".", width-fill)
	fmt.Fprintf(p.w, "\r\033[K[%s] %d/%d  %s  ETA %s", bar, step, p.total, summary, eta)
	if step >= p.total {
		fmt.Fprintln(p.w)
	}
}

// Note writes a line of its own (an evaluation, a checkpoint) without
// breaking the redrawn progress line.
func (p *Progress) Note(format string, args ...any) {
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}
