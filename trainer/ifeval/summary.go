package ifeval

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultDataDir returns ../shared/data/ifeval relative to the repository
// root (the first directory holding go.mod at or above start).
func DefaultDataDir(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("ifeval: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("ifeval: no go.mod at or above %s to locate ../shared/data/ifeval", start)
		}
		dir = parent
	}
	data := filepath.Join(dir, "..", "shared", "data", "ifeval")
	if _, err := os.Stat(data); err != nil {
		return "", fmt.Errorf("ifeval: shared IFEval data not found: %w", err)
	}
	return data, nil
}

// Summary is the ifeval entry of `livehat eval --json`: the four
// accuracies in percent, with prompt-level strict as the headline score.
type Summary struct {
	Name         string  `json:"name"`
	Score        float64 `json:"score"`
	N            int     `json:"n"`
	PromptStrict float64 `json:"prompt_strict"`
	InstStrict   float64 `json:"inst_strict"`
	PromptLoose  float64 `json:"prompt_loose"`
	InstLoose    float64 `json:"inst_loose"`
}

// Summary returns the report's suite entry.
func (r Report) Summary() Summary {
	return Summary{
		Name:         "ifeval",
		Score:        r.PromptStrict.Percent(),
		N:            r.PromptStrict.Total,
		PromptStrict: r.PromptStrict.Percent(),
		InstStrict:   r.InstStrict.Percent(),
		PromptLoose:  r.PromptLoose.Percent(),
		InstLoose:    r.InstLoose.Percent(),
	}
}
