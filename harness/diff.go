package harness

import (
	"encoding/json"
	"fmt"
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
	// After is, for a move, the path of the element it now follows ("" at
	// the front): when additions and removals leave a moved element at the
	// same position, the position alone does not say what changed.
	After string `json:"after,omitempty"`
}

// String writes the change for a person: "+ path: new", "- path: old",
// "~ path: old → new" or a move.
func (c Change) String() string {
	switch c.Kind {
	case "added":
		return fmt.Sprintf("+ %s: %s", c.Path, show(c.New))
	case "removed":
		return fmt.Sprintf("- %s: %s", c.Path, show(c.Old))
	case "moved":
		if c.Old == c.New && c.After != "" {
			return fmt.Sprintf("~ %s: moved after %s (position %v in both, as entries around it were added or removed)", c.Path, c.After, c.New)
		}
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
	changes := []Change{}
	diffValue(toTree(a), toTree(b), "", &changes)
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

// toTree encodes h and parses it back into a tree, which keeps the field
// order of the structs so that a diff reads in the order of the file.
func toTree(h *Harness) *node {
	raw, err := json.Marshal(h)
	if err != nil {
		return &node{}
	}
	n, err := parseJSONTree(raw)
	if err != nil {
		return &node{}
	}
	return n
}

func diffValue(a, b *node, path string, out *[]Change) {
	switch {
	case a.kind == kindObject && b.kind == kindObject:
		diffObject(a, b, path, out)
	case a.kind == kindArray && b.kind == kindArray:
		diffList(a.items, b.items, path, out)
	case !jsonEqual(a.toValue(), b.toValue()):
		*out = append(*out, Change{Path: path, Kind: "changed", Old: a.toValue(), New: b.toValue()})
	}
}

func diffObject(a, b *node, path string, out *[]Change) {
	for _, k := range a.keys {
		p := join(path, k)
		if bv, ok := b.fields[k]; ok {
			diffValue(a.fields[k], bv, p, out)
		} else {
			*out = append(*out, Change{Path: p, Kind: "removed", Old: a.fields[k].toValue()})
		}
	}
	for _, k := range b.keys {
		if _, ok := a.fields[k]; !ok {
			*out = append(*out, Change{Path: join(path, k), Kind: "added", New: b.fields[k].toValue()})
		}
	}
}

// listKey returns the field that names the elements of a list, if every
// element of both lists has a distinct value for it.
func listKey(a, b []*node) string {
	for _, field := range []string{"id", "name", "kind"} {
		if namedBy(a, field) && namedBy(b, field) {
			return field
		}
	}
	return ""
}

func namedBy(list []*node, field string) bool {
	seen := map[string]bool{}
	for _, it := range list {
		if it.kind != kindObject || it.fields[field] == nil {
			return false
		}
		name, ok := it.fields[field].value.(string)
		if !ok || seen[name] {
			return false
		}
		seen[name] = true
	}
	return true
}

// diffList matches named elements by name and other elements by content
// (a longest common subsequence), so that inserting one rule reads as one
// addition rather than a change of every later rule.
func diffList(a, b []*node, path string, out *[]Change) {
	key := listKey(a, b)
	name := func(n *node) string { return n.fields[key].value.(string) }
	if key == "" {
		name = func(n *node) string { x, _ := json.Marshal(n.toValue()); return string(x) }
	}
	posA, posB := map[string]int{}, map[string]int{}
	for i, v := range a {
		posA[name(v)] = i
	}
	for i, v := range b {
		posB[name(v)] = i
	}
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
	samePlace := func(n string) bool { return posA[n] == posB[n] }
	stay := longestCommonSubsequence(commonA, commonB, samePlace)
	label := func(n *node, i int) string {
		if key != "" {
			return fmt.Sprintf("%s[%s]", path, name(n))
		}
		return fmt.Sprintf("%s[%d]", path, i)
	}
	for i, v := range a {
		j, ok := posB[name(v)]
		if !ok {
			*out = append(*out, Change{Path: label(v, i), Kind: "removed", Old: v.toValue()})
			continue
		}
		if key != "" {
			diffValue(v, b[j], label(v, i), out)
		}
	}
	for _, n := range commonA {
		if !stay[n] {
			c := Change{Path: label(a[posA[n]], posA[n]), Kind: "moved", Old: posA[n] + 1, New: posB[n] + 1}
			if j := posB[n]; j > 0 {
				c.After = label(b[j-1], j-1)
			}
			*out = append(*out, c)
		}
	}
	for j, v := range b {
		if _, ok := posA[name(v)]; !ok {
			*out = append(*out, Change{Path: label(v, j), Kind: "added", New: v.toValue()})
		}
	}
}

// longestCommonSubsequence returns the names that keep their relative
// order between a and b; the others are the ones that moved. Among the
// longest such sequences it keeps the one with the most names that stayed
// at their position (samePlace), so that a reorder reports the elements a
// person moved, not their neighbours.
func longestCommonSubsequence(a, b []string, samePlace func(string) bool) map[string]bool {
	// A match is worth more than any number of same-place bonuses, so the
	// sequence stays a longest one.
	match := len(a) + 1
	weight := func(n string) int {
		if samePlace(n) {
			return match + 1
		}
		return match
	}
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			if a[i] == b[j] {
				dp[i][j] = max(dp[i][j], dp[i+1][j+1]+weight(a[i]))
			}
		}
	}
	keep := map[string]bool{}
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j] && dp[i][j] == dp[i+1][j+1]+weight(a[i]):
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

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
