package harness

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Change is one difference between two harness versions.
type Change struct {
	// Path names the field, using names rather than indexes for skills,
	// tools, hooks and sections, e.g. `tools[coupon_check].description`.
	Path string `json:"path"`
	// Kind is "added", "removed", "changed" or "moved".
	Kind string `json:"kind"`
	Old  any    `json:"old,omitempty"`
	New  any    `json:"new,omitempty"`
}

func (c Change) String() string {
	switch c.Kind {
	case "added":
		return fmt.Sprintf("+ %s: %s", c.Path, show(c.New))
	case "removed":
		return fmt.Sprintf("- %s: %s", c.Path, show(c.Old))
	case "moved":
		return fmt.Sprintf("~ %s: moved from position %v to %v", c.Path, c.Old, c.New)
	}
	return fmt.Sprintf("~ %s: %s → %s", c.Path, show(c.Old), show(c.New))
}

// show prints a value compactly for a person: strings quoted, objects as
// JSON, long values cut.
func show(v any) string {
	var s string
	if str, ok := v.(string); ok {
		s = fmt.Sprintf("%q", str)
	} else {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	return truncate(s, 160)
}

// Diff lists what changed from a to b, field by field. Lists of named
// things (skills, tools, hooks, sections, schema properties) are matched by
// name, so a reorder reads as "moved" and an edit as a change of one field.
func Diff(a, b *Harness) []Change {
	var changes []Change
	diffValue(toGeneric(a), toGeneric(b), "", &changes)
	return changes
}

// FormatDiff writes changes one per line, or "no changes".
func FormatDiff(changes []Change) string {
	if len(changes) == 0 {
		return "no changes\n"
	}
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func toGeneric(h *Harness) any {
	raw, err := json.Marshal(h)
	if err != nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return v
}

func diffValue(a, b any, path string, out *[]Change) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			diffObject(av, bv, path, out)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			diffList(av, bv, path, out)
			return
		}
	}
	if !jsonEqual(a, b) {
		*out = append(*out, Change{Path: path, Kind: "changed", Old: a, New: b})
	}
}

func diffObject(a, b map[string]any, path string, out *[]Change) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		av, inA := a[k]
		bv, inB := b[k]
		p := join(path, k)
		switch {
		case !inA:
			*out = append(*out, Change{Path: p, Kind: "added", New: bv})
		case !inB:
			*out = append(*out, Change{Path: p, Kind: "removed", Old: av})
		default:
			diffValue(av, bv, p, out)
		}
	}
}

// listKey returns the field that names the elements of a list, if every
// element of both lists has a distinct value for it.
func listKey(a, b []any) string {
	for _, field := range []string{"id", "name", "kind"} {
		if namedBy(a, field) && namedBy(b, field) {
			return field
		}
	}
	return ""
}

func namedBy(list []any, field string) bool {
	seen := map[string]bool{}
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		name, ok := m[field].(string)
		if !ok || seen[name] {
			return false
		}
		seen[name] = true
	}
	return true
}

func diffList(a, b []any, path string, out *[]Change) {
	key := listKey(a, b)
	if key == "" {
		if allScalars(a) && allScalars(b) {
			diffScalarList(a, b, path, out)
			return
		}
		n := max(len(a), len(b))
		for i := range n {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(a):
				*out = append(*out, Change{Path: p, Kind: "added", New: b[i]})
			case i >= len(b):
				*out = append(*out, Change{Path: p, Kind: "removed", Old: a[i]})
			default:
				diffValue(a[i], b[i], p, out)
			}
		}
		return
	}
	name := func(v any) string { return v.(map[string]any)[key].(string) }
	posA, posB := map[string]int{}, map[string]int{}
	for i, v := range a {
		posA[name(v)] = i
	}
	for i, v := range b {
		posB[name(v)] = i
	}
	// Relative order among common elements decides "moved", so removing one
	// element does not report every later one as moved.
	var commonA, commonB []string
	for _, v := range a {
		if _, ok := posB[name(v)]; ok {
			commonA = append(commonA, name(v))
		}
	}
	for _, v := range b {
		if _, ok := posA[name(v)]; ok {
			commonB = append(commonB, name(v))
		}
	}
	stay := longestCommonSubsequence(commonA, commonB)
	for _, v := range a {
		n := name(v)
		p := fmt.Sprintf("%s[%s]", path, n)
		j, ok := posB[n]
		if !ok {
			*out = append(*out, Change{Path: p, Kind: "removed", Old: v})
			continue
		}
		diffValue(v, b[j], p, out)
	}
	for _, n := range commonA {
		if !stay[n] {
			*out = append(*out, Change{Path: fmt.Sprintf("%s[%s]", path, n), Kind: "moved", Old: posA[n] + 1, New: posB[n] + 1})
		}
	}
	for _, v := range b {
		n := name(v)
		if _, ok := posA[n]; !ok {
			*out = append(*out, Change{Path: fmt.Sprintf("%s[%s]", path, n), Kind: "added", New: v})
		}
	}
}

// longestCommonSubsequence returns the names that keep their relative
// order between a and b; the others are the ones that moved.
func longestCommonSubsequence(a, b []string) map[string]bool {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	keep := map[string]bool{}
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			keep[a[i]] = true
			i++
			j++
		case dp[i+1][j] >= dp[i][j+1]:
			i++
		default:
			j++
		}
	}
	return keep
}

func allScalars(list []any) bool {
	for _, v := range list {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// diffScalarList reports a list of strings or numbers as a whole when it
// changed, which reads better than index-by-index edits for short lists.
func diffScalarList(a, b []any, path string, out *[]Change) {
	if !jsonEqual(a, b) {
		*out = append(*out, Change{Path: path, Kind: "changed", Old: a, New: b})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
