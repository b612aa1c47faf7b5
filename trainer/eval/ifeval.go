package eval

import (
	"context"
	"fmt"
	"sync"

	"github.com/livehat/livehat/trainer/ifeval"
)

// Generator answers one prompt as a plain chat turn, without a harness:
// IFEval measures general instruction following, which HAT must keep.
// maxTokens bounds the reply (IFEval's protocol allows 1280).
type Generator func(ctx context.Context, prompt string, maxTokens int) (string, error)

// ifevalMaxTokens is the official protocol's reply budget.
const ifevalMaxTokens = 1280

// RunIFEval generates a response to each IFEval prompt (the official
// protocol: the prompt as the single user turn, greedy, up to 1280 tokens
// — the generator's job) and scores them. limit > 0 runs only the first
// prompts, for a quick look; the paper's numbers need all 541.
func RunIFEval(ctx context.Context, dataDir string, gen Generator, limit, parallel int, progress func(done, total int)) (ifeval.Report, error) {
	promptsPath := dataDir + "/input_data.jsonl"
	prompts, err := ifeval.LoadPrompts(promptsPath)
	if err != nil {
		return ifeval.Report{}, err
	}
	if limit > 0 && limit < len(prompts) {
		prompts = prompts[:limit]
	}
	if parallel <= 0 {
		parallel = 2
	}
	responses := make([]ifeval.Response, len(prompts))
	errs := make([]error, len(prompts))
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
			text, err := gen(ctx, p.Prompt, ifevalMaxTokens)
			responses[i] = ifeval.Response{Prompt: p.Prompt, Response: text}
			errs[i] = err
			mu.Lock()
			done++
			if progress != nil {
				progress(done, len(prompts))
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if err := ctx.Err(); err != nil {
		return ifeval.Report{}, err
	}
	if failed == len(prompts) {
		return ifeval.Report{}, fmt.Errorf("eval: ifeval: every generation failed, the first with: %w", errs[0])
	}
	ev, err := ifeval.NewEvaluator(dataDir, ifeval.Options{})
	if err != nil {
		return ifeval.Report{}, err
	}
	// A failed generation counts as an empty response, which fails every
	// instruction of its prompt: the report keeps the partial run honest.
	return ev.Evaluate(ctx, prompts, responses)
}
