package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/livehat/livehat/trainer/opd"
)

// SuiteMiniIF is Mini-IF: general prompts with instructions a rule can
// check (length, keywords, forbidden words, case, JSON, bullets, language,
// endings), chit-chat and simple questions — the general ability that
// Fixed-Harness SFT erodes and HAT keeps, measured on prompts a compact
// model can answer. The prompts and checkers are package opd's, the ones
// On-Policy Distillation trains on, drawn with seeds no training run uses.
const SuiteMiniIF = "miniif"

// miniIFSeed and miniIFItems fix the committed suite. Training draws the
// general prompts with the run's seeds (small numbers); this one is apart.
const (
	miniIFSeed     = 90_001
	miniIFItems    = 200
	miniIFMaxReply = 192
)

// GenerateMiniIF builds the Mini-IF suite from its fixed seed; the
// committed suites/miniif.jsonl is its output.
func GenerateMiniIF() []opd.Prompt { return opd.Prompts(miniIFSeed, miniIFItems) }

// WriteMiniIF writes Mini-IF prompts, one JSON object a line.
func WriteMiniIF(w io.Writer, prompts []opd.Prompt) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, p := range prompts {
		if err := enc.Encode(p); err != nil {
			return fmt.Errorf("eval: write %s: %w", p.ID, err)
		}
	}
	return nil
}

// ReadMiniIF reads a Mini-IF suite file; errors name the line.
func ReadMiniIF(r io.Reader) ([]opd.Prompt, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var out []opd.Prompt
	ids := map[string]bool{}
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var p opd.Prompt
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("eval: suite miniif line %d: %w", line, err)
		}
		switch {
		case p.ID == "" || p.Text == "":
			return nil, fmt.Errorf("eval: suite miniif line %d: a prompt needs an id and a text", line)
		case ids[p.ID]:
			return nil, fmt.Errorf("eval: suite miniif line %d: duplicate id %q", line, p.ID)
		case len(p.Constraints) == 0 && p.Answer == "" && p.Kind != opd.KindChitchat:
			return nil, fmt.Errorf("eval: suite miniif line %d: prompt %s has nothing to check", line, p.ID)
		}
		ids[p.ID] = true
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: suite miniif line %d: %w", line+1, err)
	}
	if len(out) == 0 {
		return nil, errors.New("eval: suite miniif is empty")
	}
	return out, nil
}

// OpenMiniIF reads the committed Mini-IF suite.
func OpenMiniIF() ([]opd.Prompt, error) {
	f, err := committed.Open("suites/" + SuiteMiniIF + ".jsonl")
	if err != nil {
		return nil, fmt.Errorf("eval: no committed suite %q", SuiteMiniIF)
	}
	defer f.Close()
	return ReadMiniIF(f)
}

// MiniIFResult is one prompt's reply and checks.
type MiniIFResult struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Reply  string `json:"reply"`
	Passed int    `json:"passed"`
	Total  int    `json:"total"`
	Error  string `json:"error,omitempty"`
}

// MiniIFReport is Mini-IF's result. Score is the prompt-level strict
// accuracy (every check of a prompt passes; a chit-chat prompt passes with
// any non-empty reply), with its 95% interval; Instructions is the share
// of single checks passed.
type MiniIFReport struct {
	Name         string             `json:"name"`
	Score        float64            `json:"score"`
	N            int                `json:"n"`
	CI95         [2]float64         `json:"ci95"`
	Instructions float64            `json:"instructions"`
	Errors       int                `json:"errors"`
	Categories   map[string]Summary `json:"categories"`
	Took         time.Duration      `json:"took_ns"`
	Items        []MiniIFResult     `json:"-"`
}

// RunMiniIF answers every prompt with gen (the prompt as the only user
// turn, greedy, at most 192 tokens: the references are a few sentences)
// and checks the replies with the prompts' own checkers.
func RunMiniIF(ctx context.Context, prompts []opd.Prompt, gen Generator, parallel int, progress func(done, total int)) (*MiniIFReport, error) {
	if gen == nil {
		return nil, errors.New("eval: miniif needs a model that answers plain prompts")
	}
	parallel = max(parallel, 1)
	t0 := time.Now()
	results := make([]MiniIFResult, len(prompts))
	var wg sync.WaitGroup
	var mu sync.Mutex
	sem := make(chan struct{}, parallel)
	done := 0
	for i, p := range prompts {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			reply, err := gen(ctx, p.Text, miniIFMaxReply)
			results[i] = checkMiniIF(p, reply, err)
			mu.Lock()
			done++
			if progress != nil {
				progress(done, len(prompts))
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return summarizeMiniIF(results, time.Since(t0)), nil
}

// checkMiniIF scores one reply. An empty reply, or a failed generation,
// follows no instruction, even one it does not break ("at most 12 words").
func checkMiniIF(p opd.Prompt, reply string, err error) MiniIFResult {
	r := MiniIFResult{ID: p.ID, Kind: miniIFCategory(p), Reply: reply}
	if err != nil {
		r.Error = err.Error()
		r.Reply = ""
	}
	r.Passed, r.Total = p.Check(r.Reply)
	// Chit-chat has no rule to follow beyond answering at all.
	r.Total = max(r.Total, 1)
	switch {
	case strings.TrimSpace(r.Reply) == "":
		r.Passed = 0
	case p.Kind == opd.KindChitchat:
		r.Passed = r.Total
	}
	return r
}

// miniIFCategory is a prompt's kind, or for an instruction its first
// constraint.
func miniIFCategory(p opd.Prompt) string {
	if p.Kind == opd.KindInstruction && len(p.Constraints) > 0 {
		return string(p.Constraints[0].Kind)
	}
	return string(p.Kind)
}

func summarizeMiniIF(results []MiniIFResult, took time.Duration) *MiniIFReport {
	rep := &MiniIFReport{Name: SuiteMiniIF, N: len(results), Categories: map[string]Summary{}, Took: took, Items: results}
	if len(results) == 0 {
		return rep
	}
	scores := make([]float64, len(results))
	cat := map[string][]float64{}
	passed, total := 0, 0
	for i, r := range results {
		if r.Passed == r.Total {
			scores[i] = 1
		}
		passed += r.Passed
		total += r.Total
		if r.Error != "" {
			rep.Errors++
		}
		cat[r.Kind] = append(cat[r.Kind], scores[i])
	}
	mean, lo, hi := meanCI(scores)
	rep.Score, rep.CI95 = 100*mean, [2]float64{100 * lo, 100 * hi}
	rep.Instructions = percent(passed, total)
	for c, s := range cat {
		m, _, _ := meanCI(s)
		rep.Categories[c] = Summary{Score: 100 * m, N: len(s)}
	}
	return rep
}
