package ifeval

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	testEvalOnce sync.Once
	testEval     *Evaluator
	testEvalErr  error
	testDataDir  string
)

// sharedData returns the shared IFEval data directory, skipping the test
// with a clear message when ../shared (from the repository root) is absent.
func sharedData(t testing.TB) string {
	t.Helper()
	dir, err := DefaultDataDir(".")
	if err != nil {
		t.Skipf("skipping: shared IFEval data (../shared/data/ifeval from the repository root) is absent: %v", err)
	}
	return dir
}

// evaluator returns an Evaluator over the shared data, loaded once.
func evaluator(t testing.TB) *Evaluator {
	t.Helper()
	dir := sharedData(t)
	testEvalOnce.Do(func() {
		testDataDir = dir
		testEval, testEvalErr = NewEvaluator(dir, Options{})
	})
	if testEvalErr != nil {
		t.Fatal(testEvalErr)
	}
	return testEval
}

// officialFile returns the path of a file in the shared data directory.
func officialFile(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(sharedData(t), name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipping: %s absent: %v", p, err)
	}
	return p
}

// follows compiles one instruction and checks one response with the raw
// checker (no strict/loose wrapping).
func follows(t *testing.T, res resources, id string, kw map[string]any, response string) bool {
	t.Helper()
	inst, err := compileInstruction(id, kw, nil)
	if err != nil {
		t.Fatalf("compile %s %v: %v", id, kw, err)
	}
	return inst.check(res, response)
}
