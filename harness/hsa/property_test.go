package hsa

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestTaskPreservation is the property HSA rests on: for random harnesses
// and random gold calls valid under them, every family with many seeds
// gives a valid harness, maps every gold call to a call that validates
// against the new schema, inverts it back to the same call, never
// changes its input, and is reproducible from its seed.
func TestTaskPreservation(t *testing.T) {
	harnesses, seeds := 20, 4
	if testing.Short() {
		harnesses, seeds = 8, 2
	}
	applied := map[string]int{}
	for hi := range harnesses {
		rng := newRand(int64(hi))
		h := genHarness(t, rng)
		gold := genCalls(t, rng, h)
		cache := schemaCache{}
		base, err := cache.schemas(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range gold {
			if err := checkCall(base, c); err != nil {
				t.Fatalf("harness %d: generated gold is invalid under the base harness: %v", hi, err)
			}
		}
		before, err := harness.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Gold: gold}
		for _, f := range Families() {
			for s := range seeds {
				seed := int64(hi*1000 + s)
				nh, m, err := f.Apply(h, seed, opts)
				if errors.Is(err, ErrNotApplicable) {
					continue
				}
				if err != nil {
					t.Fatalf("harness %d, %s seed %d: %v", hi, f.Name, seed, err)
				}
				applied[f.Name]++
				checkVariant(t, cache, f.Name, seed, h, base, nh, m, gold)
				// Every family but correction (which only plans a transcript
				// change) must change the harness itself.
				if variant, _ := harness.Marshal(nh); f.Name != "correction" && string(variant) == string(before) {
					t.Fatalf("harness %d, %s seed %d: the variant equals the input", hi, f.Name, seed)
				}
				after, _ := harness.Marshal(h)
				if string(after) != string(before) {
					t.Fatalf("harness %d, %s seed %d: the input harness was modified", hi, f.Name, seed)
				}
				again, m2, err := f.Apply(h, seed, opts)
				if err != nil {
					t.Fatalf("%s seed %d: second run: %v", f.Name, seed, err)
				}
				a, _ := harness.Marshal(nh)
				b, _ := harness.Marshal(again)
				if string(a) != string(b) || !reflect.DeepEqual(m, m2) {
					t.Fatalf("%s seed %d: not reproducible", f.Name, seed)
				}
			}
		}
		for _, pool := range []Pool{PoolTrain, PoolHeldOut} {
			nh, rec, err := Augment(h, pool, int64(hi), 3, opts)
			if err != nil {
				t.Fatalf("harness %d: augment %s: %v", hi, pool, err)
			}
			checkVariant(t, cache, "augment/"+string(pool), int64(hi), h, base, nh, rec.Mapping(), gold)
		}
	}
	for _, f := range Families() {
		if applied[f.Name] == 0 {
			t.Errorf("family %s never applied to a generated harness", f.Name)
		}
	}
}

func checkVariant(t *testing.T, cache schemaCache, name string, seed int64, h *harness.Harness, old map[string]*jsonschema.Schema, nh *harness.Harness, m Mapping, gold []Call) {
	t.Helper()
	checkPluginSide(t, name, seed, h, nh, m, gold)
	if err := harness.Validate(nh); err != nil {
		t.Fatalf("%s seed %d: invalid variant: %v", name, seed, err)
	}
	compiled, err := cache.schemas(nh)
	if err != nil {
		t.Fatalf("%s seed %d: %v", name, seed, err)
	}
	for _, c := range gold {
		mc, err := m.Map(c)
		if err != nil {
			t.Fatalf("%s seed %d: map %v: %v", name, seed, c, err)
		}
		if err := checkCall(compiled, mc); err != nil {
			tool, _ := nh.Tool(mc.Name)
			t.Fatalf("%s seed %d: mapped gold does not validate: %v\nschema %s\nsteps %+v", name, seed, err, tool.Parameters, m.Steps)
		}
		back, err := m.Inverse(mc)
		if err != nil {
			t.Fatalf("%s seed %d: inverse of %v: %v", name, seed, mc, err)
		}
		if !SameCall(back, c) {
			t.Fatalf("%s seed %d: Inverse(Map(c)) = %v, want %v", name, seed, back, c)
		}
		if err := checkCall(old, back); err != nil {
			t.Fatalf("%s seed %d: inverse does not validate under the old harness: %v", name, seed, err)
		}
	}
}

func TestAugmentComposes(t *testing.T) {
	h := fuzzHarness()
	train, err := PoolFamilies(PoolTrain)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range int64(20) {
		_, rec, err := Augment(h, PoolTrain, seed, len(train), Options{Gold: fuzzGold()})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(rec.Transforms) < len(train)-5 { // masking can leave reorders nothing to do
			t.Errorf("seed %d: only %d of %d families applied: %+v", seed, len(rec.Transforms), len(train), families(rec))
		}
		for i, tr := range rec.Transforms {
			if tr.Family == "correction" && i != len(rec.Transforms)-1 {
				t.Errorf("seed %d: correction applied at %d, before other families", seed, i)
			}
		}
	}
	if _, _, err := Augment(h, PoolTrain, 1, 0, Options{}); err == nil {
		t.Error("n = 0: want an error")
	}
	if _, _, err := Augment(h, "nope", 1, 1, Options{}); err == nil {
		t.Error("unknown pool: want an error")
	}
	bad := h.Clone()
	bad.Tools[0].Parameters = []byte(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`)
	if _, _, err := Augment(bad, PoolTrain, 1, 1, Options{}); err == nil {
		t.Error("invalid input harness: want an error")
	}
	gone := Options{Gold: []Call{{Name: "open_skill", Arguments: map[string]any{"skill_id": "price_reply"}}}}
	for seed := range int64(30) {
		nh, _, err := skillMask(h, seed, gone)
		if errors.Is(err, ErrNotApplicable) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := nh.Skill("price_reply"); !ok {
			t.Fatalf("seed %d: skill-mask dropped the protected skill", seed)
		}
	}
}

func families(r Record) []string {
	var out []string
	for _, t := range r.Transforms {
		out = append(out, t.Family)
	}
	return out
}

// checkPluginSide is the property a live runtime rests on: a gold call
// mapped to the variant, run as the runtime runs it (the variant tool's
// plugin export, its argument map applied), reaches the plugin as the
// base harness's call does once what the argument map cannot say (wraps,
// added arguments) is undone — and exactly so for a family that only
// renames.
func checkPluginSide(t *testing.T, name string, seed int64, h, nh *harness.Harness, m Mapping, gold []Call) {
	t.Helper()
	full := FromPlugins(h).Then(m)
	rest := full.ExceptArgumentRenames()
	renamesOnly := !slices.ContainsFunc(m.Steps, func(s Step) bool { return s.Op == OpWrap || s.Op == OpFlatten || s.Op == OpAddParam })
	for _, c := range gold {
		if c.Name == h.LoadSkillToolName() {
			continue
		}
		bt, _ := h.Tool(c.Name)
		raw, _ := json.Marshal(c.Arguments)
		wantArgs, err := bt.PluginArguments(raw)
		if err != nil {
			t.Fatal(err)
		}
		want := Call{Name: bt.Export, Arguments: decodeArgs(t, wantArgs)}
		mc, err := m.Map(c)
		if err != nil {
			t.Fatalf("%s seed %d: %v", name, seed, err)
		}
		vt, ok := nh.Tool(mc.Name)
		if !ok || vt.Plugin != bt.Plugin || vt.Export != bt.Export {
			t.Fatalf("%s seed %d: %s became %s, which runs %s/%s, not %s/%s", name, seed, c.Name, mc.Name, vt.Plugin, vt.Export, bt.Plugin, bt.Export)
		}
		raw, _ = json.Marshal(mc.Arguments)
		sent, err := vt.PluginArguments(raw)
		if err != nil {
			t.Fatalf("%s seed %d: %s: %v\nmap %+v", name, seed, mc.Name, err, vt.ArgumentMap)
		}
		got := Call{Name: bt.Export, Arguments: decodeArgs(t, sent)}
		if renamesOnly && !SameCall(got, want) {
			t.Fatalf("%s seed %d: the plugin received %v, want %v\nmap %+v\nsteps %+v", name, seed, got, want, vt.ArgumentMap, m.Steps)
		}
		back, err := rest.Inverse(Call{Name: mc.Name, Arguments: decodeArgs(t, sent)})
		if err != nil {
			t.Fatalf("%s seed %d: undo the rest of %v: %v", name, seed, mc, err)
		}
		if !SameCall(back, want) {
			t.Fatalf("%s seed %d: after the runtime and the rest of the mapping the plugin gets %v, want %v\nmap %+v\nsteps %+v", name, seed, back, want, vt.ArgumentMap, full.Steps)
		}
	}
}

func decodeArgs(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("arguments %s: %v", raw, err)
	}
	return out
}
