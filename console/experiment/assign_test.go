package experiment

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func twoArms(id string, wc, wt float64) Experiment {
	return Experiment{ID: id, Name: id, Unit: UnitViewer, Arms: []Arm{{Name: "control", Weight: wc}, {Name: "treatment", Weight: wt}}}.withDefaults()
}

// TestAssignStable: the arm is a function of (experiment, unit) only, so
// repeated calls and a copy of the experiment agree, and changing the
// experiment id reshuffles units independently.
func TestAssignStable(t *testing.T) {
	e := twoArms("exp-1", 1, 1)
	other := twoArms("exp-2", 1, 1)
	same := 0
	for i := range 2000 {
		v := fmt.Sprintf("viewer-%d", i)
		a, err := e.Assign(v)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := twoArms("exp-1", 1, 1).Assign(v)
		if a.Name != b.Name {
			t.Fatalf("viewer %s moved from %s to %s", v, a.Name, b.Name)
		}
		o, _ := other.Assign(v)
		if o.Name == a.Name {
			same++
		}
	}
	// Independent experiments agree on about half the viewers.
	if same < 900 || same > 1100 {
		t.Errorf("two experiments agree on %d of 2000 viewers, want about 1000", same)
	}
	// A pinned value guards against the hash changing between releases,
	// which would move every running experiment's viewers.
	pinned := ""
	for i := range 24 {
		a, _ := e.Assign(fmt.Sprintf("viewer-%d", i))
		pinned += a.Name[:1]
	}
	if pinned != "cttttctccttctcccttctttcc" {
		t.Errorf("arms of viewer-0…23 = %s, want cttttctccttctcccttctttcc", pinned)
	}
}

// TestAssignProportions: over 20,000 units each arm's share is within
// four standard errors of its weight's share.
func TestAssignProportions(t *testing.T) {
	for _, w := range [][]float64{{1, 1}, {9, 1}, {1, 2, 1}} {
		e := Experiment{ID: "split", Name: "split", Unit: UnitViewer}
		for i, x := range w {
			e.Arms = append(e.Arms, Arm{Name: fmt.Sprintf("a%d", i), Weight: x})
		}
		const n = 20000
		counts := map[string]int{}
		for i := range n {
			a, err := e.Assign(fmt.Sprintf("u%d", i))
			if err != nil {
				t.Fatal(err)
			}
			counts[a.Name]++
		}
		var total float64
		for _, x := range w {
			total += x
		}
		for i, x := range w {
			p := x / total
			got := float64(counts[fmt.Sprintf("a%d", i)]) / n
			if se := math.Sqrt(p * (1 - p) / n); math.Abs(got-p) > 4*se {
				t.Errorf("weights %v: arm %d got %.4f of units, want %.4f ± %.4f", w, i, got, p, 4*se)
			}
		}
	}
}

func TestAssignErrors(t *testing.T) {
	e := twoArms("x", 1, 1)
	if _, err := e.Assign(""); err == nil {
		t.Error("empty unit id accepted")
	}
	if _, err := (Experiment{ID: "x"}).Assign("u"); err == nil {
		t.Error("experiment without arms assigned a unit")
	}
	if _, err := twoArms("x", 1, 0).Assign("u"); err == nil {
		t.Error("zero weight accepted")
	}
	if _, err := e.UnitID("s", ""); err == nil {
		t.Error("viewer unit without a viewer id accepted")
	}
	s := e
	s.Unit = UnitStream
	if u, err := s.UnitID("s1", "v1"); err != nil || u != "s1" {
		t.Errorf("stream unit id = %q, %v", u, err)
	}
}

func TestValidateNamesProblems(t *testing.T) {
	e := Experiment{ID: "e", Name: "n", Unit: "room", Arms: []Arm{{Name: "a", Weight: 1}, {Name: "a", Weight: -1}},
		Primary: "revenue", Currency: "yuan", Alpha: 0.7, AttributionWindow: -1}.withDefaults()
	err := e.Validate()
	if err == nil {
		t.Fatal("invalid experiment accepted")
	}
	for _, want := range []string{"unit", "duplicate arm", "weight", "primary_metric", "currency", "alpha", "attribution_window"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if err := twoArms("ok", 1, 1).Validate(); err != nil {
		t.Errorf("valid experiment rejected: %v", err)
	}
}
