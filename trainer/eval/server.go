package eval

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/livehat/livehat/model/remote"
	"github.com/livehat/livehat/runtime"
)

// serverWatch passes a model's generations through and remembers whether
// the last one failed on a model server (a *remote.Error). The runtime
// turns such a failure into its safe line, which would otherwise be graded
// as the model's answer; the watch lets the item count it as an error.
type serverWatch struct {
	runtime.Model
	mu   sync.Mutex
	last *remote.Error
}

// Generate runs the wrapped model and records how it ended.
func (w *serverWatch) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	resp, err := w.Model.Generate(ctx, req)
	var failed *remote.Error
	if !errors.As(err, &failed) {
		failed = nil
	}
	w.mu.Lock()
	w.last = failed
	w.mu.Unlock()
	return resp, err
}

// AppliesToolTemplate answers for the wrapped model, which the runtime
// asks whether it renders the tools itself (a served model does).
func (w *serverWatch) AppliesToolTemplate() bool {
	t, ok := w.Model.(interface{ AppliesToolTemplate() bool })
	return ok && t.AppliesToolTemplate()
}

// failure is the server error a turn ended on: the last generation's, when
// the turn spoke the safe line; nil otherwise.
func (w *serverWatch) failure(t *runtime.Turn) *remote.Error {
	if t.Outcome != runtime.OutcomeSafeLine {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// serverFailed marks an item as failed on the model server.
func (res *ItemResult) serverFailed(err *remote.Error) {
	res.ServerError = err.Kind
	res.Error = "model server: " + err.Error()
}

// serverFailures counts the items of the reports that failed on the model
// server, and names their kinds ("unreachable 2, timeout 1").
func serverFailures(reports []*SuiteReport) (n int, kinds string) {
	byKind := map[remote.Kind]int{}
	for _, r := range reports {
		for k, c := range r.ServerErrors {
			byKind[k] += c
			n += c
		}
	}
	return n, kindList(byKind)
}

// kindList writes counts by kind, most frequent first.
func kindList(byKind map[remote.Kind]int) string {
	keys := slices.SortedFunc(maps.Keys(byKind), func(a, b remote.Kind) int {
		if byKind[a] != byKind[b] {
			return byKind[b] - byKind[a]
		}
		return strings.Compare(string(a), string(b))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, byKind[k])
	}
	return strings.Join(parts, ", ")
}
