package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/trainer/liveroom"
)

// The room's grader (trainer/liveroom FindUnbacked) is the referee of
// issue #18: what it calls unbacked must not reach the audience. The tests
// of this file hold the hook to it: the phrase lists it flags by, read
// from its source, and a corpus of replies run through both.

// graderSource is the grader's Go source, read by the vocabulary tests:
// the plugin cannot import trainer code outside its tests' corpus run.
const graderSource = "../../../trainer/liveroom/unbacked.go"

// corpusCase is one reply of testdata/unbacked_replies.jsonl with the
// turn that produced it.
type corpusCase struct {
	Name string `json:"name"`
	// Source says where the reply comes from: an evaluation that put it
	// on air, "hostile" (written to break a rule) or "correct".
	Source string `json:"source"`
	// Room is the room's seed: liveroom.NewRoom with the suites' shape,
	// or liveroom.TransferRoom when Transfer is set.
	Room     uint64       `json:"room"`
	Transfer bool         `json:"transfer,omitempty"`
	Lang     string       `json:"lang"`
	Viewer   string       `json:"viewer"`
	Message  string       `json:"message"`
	Calls    []corpusCall `json:"calls"`
	Reply    string       `json:"reply"`
	// Grader lists the kinds of unbacked statement the grader finds, so
	// that the test notices when the corpus no longer reproduces its
	// verdict; Hook the kinds the hook must find besides (broken text,
	// which the grader does not look for).
	Grader []string `json:"grader"`
	Hook   []string `json:"hook,omitempty"`
}

// corpusCall is a tool call of the turn with the result the room gave.
type corpusCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
}

// room builds the case's room.
func (c corpusCase) room() (*liveroom.Room, error) {
	if c.Transfer {
		return liveroom.TransferRoom(c.Room)
	}
	return liveroom.NewRoom(c.Room, liveroom.RoomConfig{MinItems: 3, MaxItems: 6}), nil
}

// transcript is the turn as the hook sees it (its catalog items and
// stream context from r), as the grader reads it, and the question.
func (c corpusCase) transcript(r *liveroom.Room) (Turn, []harness.Message, liveroom.Question) {
	turn := Turn{Reply: c.Reply, Message: c.Message, Viewer: c.Viewer, Lang: runtimeLang(c.Message), Attempt: 1, Attempts: 2,
		Config: Config{LowStock: defaultLowStock}}
	msgs := []harness.Message{{Role: harness.RoleUser, Content: c.Message}}
	for _, call := range c.Calls {
		turn.Calls = append(turn.Calls, Call{Name: call.Name, Export: call.Name, Arguments: call.Arguments, Result: call.Result})
		msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{Name: call.Name, Arguments: call.Arguments}}},
			harness.Message{Role: harness.RoleTool, Name: call.Name, Content: string(call.Result)})
	}
	msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, Content: c.Reply})
	for _, ci := range r.StreamContext() {
		turn.Context = append(turn.Context, ContextItem{Title: ci.Title, Text: ci.Text})
	}
	turn.Items = catalogFor(r, turn)
	return turn, msgs, liveroom.Question{Text: c.Message, Lang: liveroom.Lang(c.Lang), Viewer: c.Viewer}
}

func readCorpus(path string) ([]corpusCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []corpusCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var c corpusCase
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// graderKinds are the kinds of the grader's findings, sorted, each once.
func graderKinds(us []liveroom.Unbacked) []string {
	kinds := []string{}
	for _, u := range us {
		if !slices.Contains(kinds, u.Kind) {
			kinds = append(kinds, u.Kind)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// TestGraderDifferential runs the corpus through the grader and the hook:
// a reply the grader finds unbacked must be stopped, and the reply the
// hook puts on air instead (its rewrite on the last attempt) must be one
// the grader finds backed; a correct reply must pass both.
func TestGraderDifferential(t *testing.T) {
	cases, err := readCorpus("testdata/unbacked_replies.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 15 {
		t.Fatalf("read %d cases, want the whole corpus", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r, err := c.room()
			if err != nil {
				t.Fatal(err)
			}
			turn, msgs, q := c.transcript(r)
			graded := r.FindUnbacked(q, msgs, liveroom.GradeOptions{})
			if got := graderKinds(graded); !slices.Equal(got, c.Grader) {
				t.Fatalf("%q: the grader finds %v (%+v), the corpus says %v: it no longer reproduces the verdict", c.Reply, got, graded, c.Grader)
			}
			fs := Check(turn)
			switch {
			case len(graded) > 0 && len(fs) == 0:
				t.Fatalf("%q: the grader finds %+v; the hook lets it through", c.Reply, graded)
			case len(graded) == 0 && len(c.Hook) == 0 && len(fs) > 0:
				t.Fatalf("%q: the grader finds it backed; the hook stops it: %v", c.Reply, fs)
			}
			for _, k := range c.Hook {
				if !slices.ContainsFunc(fs, func(f Finding) bool { return string(f.Kind) == k }) {
					t.Errorf("%q: no %s finding: %v", c.Reply, k, fs)
				}
			}
			if len(fs) == 0 {
				return
			}
			last := turn
			last.Attempt = last.Attempts
			d := Decide(last)
			if d.Text == "" {
				t.Fatalf("%q: the last attempt is not rewritten: %+v", c.Reply, d)
			}
			msgs[len(msgs)-1].Content = d.Text
			if us := r.FindUnbacked(q, msgs, liveroom.GradeOptions{}); len(us) > 0 {
				t.Errorf("%q: the rewrite %q is unbacked to the grader: %+v", c.Reply, d.Text, us)
			}
		})
	}
}

// TestBrokenText: broken UTF-8, the replacement character a decoder leaves
// for it and control characters never go on air; line breaks and tabs
// are text.
func TestBrokenText(t *testing.T) {
	price := []Call{serumLookup}
	runCases(t, []checkCase{
		{"line breaks and tabs", "zh", "精华多少钱", "玻尿酸精华现在199元。\n\t喜欢就拍！\r\n", price, "", "", ""},

		{"replacement character", "zh", "精华多少钱", "玻尿酸精华现在199元\uFFFD", price, KindResidue, "元\uFFFD", "U+FFFD"},
		{"replacement character inside a word", "en", "How much is the serum?", "The se\uFFFD\uFFFDrum is 199 yuan.", price, KindResidue, "e\uFFFD\uFFFDr", "U+FFFD"},
		{"bytes that are not UTF-8", "zh", "精华多少钱", "玻尿酸精华现在199元\xe5\x9b", price, KindResidue, `元\xe5\x9b`, "not UTF-8"},
		{"bell", "en", "How much is the serum?", "The serum is 199 yuan.\a", price, KindResidue, `.\a`, "U+0007"},
		{"escape sequence", "en", "How much is the serum?", "The serum is \x1b[1m199 yuan.", price, KindResidue, `\x1b`, "U+001B"},
		{"C1 control", "zh", "精华多少钱", "玻尿酸精华\u0085现在199元", price, KindResidue, `\u0085`, "U+0085"},
		{"noncharacter", "zh", "精华多少钱", "玻尿酸精华\uFFFF现在199元", price, KindResidue, `\uffff`, "U+FFFF"},
	})
	t.Run("rewrite", func(t *testing.T) {
		tt := turn("zh", "精华多少钱", "玻尿酸精华现在199元\uFFFD", price...)
		tt.Attempt = tt.Attempts
		d := Decide(tt)
		if d.Text == "" || strings.ContainsRune(d.Text, '\uFFFD') {
			t.Fatalf("rewrite %+v, want the backed reply without the broken text", d)
		}
		tt.Reply = d.Text
		mustPass(t, tt)
	})
}

// TestLanguageRuns are the grader's language rules: for a Chinese
// viewer, two Latin words and no Chinese once names and a greeting's
// addressee are left out, or four in a row; for an English viewer any
// Chinese outside the catalog's names and the viewer's.
func TestLanguageRuns(t *testing.T) {
	price := []Call{serumLookup}
	hoodie := []Call{hoodieLookup, hoodieStock}
	runCases(t, []checkCase{
		{"a short English word in Chinese", "zh", "精华多少钱", "玻尿酸精华现在199元，nice！", price, "", "", ""},
		{"two English words in Chinese", "zh", "精华多少钱", "玻尿酸精华现在199元，性价比超高，so good！", price, "", "", ""},
		{"sizes and units", "zh", "卫衣XL码有货吗", "XL码有货，L码也有。", hoodie, "", "", ""},
		{"thanks to a named viewer", "zh", "精华多少钱", "谢谢小美！玻尿酸精华现在199元。", price, "", "", ""},

		{"Chinese after thanks read as a name", "zh", "精华多少钱", "Thank you 小明多件一下再回复您。", price, KindLanguage, "Thank you", "English"},
		{"four English words in a row", "zh", "精华多少钱", "玻尿酸精华现在199元，it is so good。", price, KindLanguage, "it is so good", "English"},
		{"two English words and no Chinese", "zh", "精华多少钱", "Yes, 199 yuan!", price, KindLanguage, "Yes", "English"},
		{"single letters count", "zh", "精华多少钱", "玻尿酸精华199元，I a b c。", price, KindLanguage, "I a b c", "English"},
		{"a Chinese alias to an English viewer", "en", "How much is the serum?", "精华 is 199 yuan.", price, KindLanguage, "精华", "Chinese"},
		{"a Chinese value to an English viewer", "en", "What is the hoodie made of?", "The hoodie is 纯棉.", []Call{hoodieLookup}, KindLanguage, "纯棉", "Chinese"},
		{"the viewer's Chinese words to an English viewer", "en", "is 玻尿酸精华 好用 for dry skin?", "The serum is 好用.", price, KindLanguage, "好用",
			"Chinese"},
	})
	for _, c := range []struct{ lang, viewer, reply string }{
		{"en", "小美", "Hi 小美, the serum is 199 yuan."},
		{"zh", "Kiki Lee", "谢谢Kiki Lee！玻尿酸精华现在199元。"},
	} {
		t.Run("the viewer's name in "+c.lang, func(t *testing.T) {
			tt := turn(c.lang, "精华多少钱", c.reply, price...)
			if c.lang == "en" {
				tt.Message = "How much is the serum?"
			}
			tt.Viewer = c.viewer
			mustPass(t, tt)
		})
	}
}

// stringsOf returns the string literals declared as name (a func or a
// var) in the Go source at path: of a func, those of its []string
// literals; of a var, all of them (a map's keys, a pattern).
func stringsOf(path, name string) ([]string, error) {
	file, err := parser.ParseFile(gotoken.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("grader source: %w", err)
	}
	var node ast.Node
	lists := false
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name == name {
				node, lists = d.Body, true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if v, ok := s.(*ast.ValueSpec); ok && slices.ContainsFunc(v.Names, func(n *ast.Ident) bool { return n.Name == name }) {
					node = v
				}
			}
		}
	}
	if node == nil {
		return nil, fmt.Errorf("grader source: %s declares no %s", path, name)
	}
	var out []string
	var bad error
	literals := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != gotoken.STRING || bad != nil {
				return bad == nil
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				bad = fmt.Errorf("grader source: %s: %w", lit.Value, err)
				return false
			}
			out = append(out, s)
			return true
		})
	}
	if !lists {
		literals(node)
		return out, bad
	}
	ast.Inspect(node, func(n ast.Node) bool {
		c, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if at, ok := c.Type.(*ast.ArrayType); ok {
			if elt, ok := at.Elt.(*ast.Ident); ok && elt.Name == "string" {
				literals(c)
				return false
			}
		}
		return true
	})
	return out, bad
}

// graderPhrases are the phrases of the grader's []string literals in
// func name, each once.
func graderPhrases(t *testing.T, name string, min int) []string {
	t.Helper()
	all, err := stringsOf(graderSource, name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range all {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) < min {
		t.Fatalf("read %d phrases of the grader's %s, want its whole list", len(out), name)
	}
	return out
}

// stated runs the check on a reply stating p about a storage box whose
// lookup states no coupon, shipping, returns or stock, and returns the
// kinds of its findings that quote p.
func stated(p string) (Turn, []Kind) {
	lookup := call("product_lookup", `{"query":"收纳盒"}`, `{"attributes":{"capacity":"10L","容量":"10升"},"currency":"CNY",`+
		`"found":true,"item_id":"HM-1","name":"简约收纳盒","price":"39","variants":[]}`)
	lang, reply := "en", "The storage box: "+p+"."
	if hasHan(p) {
		lang, reply = "zh", "简约收纳盒"+p+"。"
	}
	tt := turn(lang, "介绍一下收纳盒", reply, lookup)
	var kinds []Kind
	for _, f := range Check(tt) {
		if fp := strings.ToLower(f.Phrase); fp != "" && (strings.Contains(fp, strings.ToLower(p)) || strings.Contains(strings.ToLower(p), fp)) {
			kinds = append(kinds, f.Kind)
		}
	}
	return tt, kinds
}

// TestYesNoVocabulary holds the hook's coupon, shipping and returns
// phrases to the grader's (its yesNoClaims): each, stated with no result
// that backs it, is a fact finding here too.
func TestYesNoVocabulary(t *testing.T) {
	for _, p := range graderPhrases(t, "yesNoClaims", 50) {
		t.Run(p, func(t *testing.T) {
			if tt, kinds := stated(p); !slices.Contains(kinds, KindFact) {
				t.Errorf("%q: no fact finding for %q, which the grader flags: %v", tt.Reply, p, Check(tt))
			}
		})
	}
}

// TestStockVocabulary holds the hook's stock phrases to the grader's (its
// stockPhrases): each, stated with no stock check, is a stock finding.
func TestStockVocabulary(t *testing.T) {
	for _, p := range graderPhrases(t, "stockPhrases", 40) {
		t.Run(p, func(t *testing.T) {
			if tt, kinds := stated(p); !slices.Contains(kinds, KindStock) {
				t.Errorf("%q: no stock finding for %q, which the grader flags: %v", tt.Reply, p, Check(tt))
			}
		})
	}
}

// TestAllergenMentionVocabulary: each allergen word of the grader's claim
// groups claims the item's allergens by its mere mention, cue or none.
func TestAllergenMentionVocabulary(t *testing.T) {
	file, err := parser.ParseFile(gotoken.NewFileSet(), graderSource, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	ast.Inspect(file, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || len(c.Args) < 3 {
			return true
		}
		if fn, ok := c.Fun.(*ast.Ident); !ok || fn.Name != "g" {
			return true
		}
		if topic, ok := c.Args[0].(*ast.Ident); !ok || topic.Name != "topicAllergen" {
			return true
		}
		if code, ok := c.Args[1].(*ast.BasicLit); !ok || code.Value == `""` {
			return true // the word "allergen" itself, held by TestAttributeVocabulary
		}
		for _, a := range c.Args[2:] {
			if lit, ok := a.(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				words = append(words, s)
			}
		}
		return true
	})
	if len(words) < 25 {
		t.Fatalf("read %d allergen words of the grader, want its whole list", len(words))
	}
	lookup := call("product_lookup", `{"query":"收纳盒"}`, `{"currency":"CNY","found":true,"item_id":"HM-1","name":"简约收纳盒","price":"39","variants":[]}`)
	for _, w := range words {
		t.Run(w, func(t *testing.T) {
			lang, reply := "en", capitalize(w)+" lovers will like the storage box."
			if hasHan(w) {
				lang, reply = "zh", "喜欢"+w+"的朋友看看简约收纳盒。"
			}
			tt := turn(lang, "介绍一下收纳盒", reply, lookup)
			if !slices.ContainsFunc(Check(tt), func(f Finding) bool { return f.Kind == KindFact && strings.EqualFold(f.Phrase, w) }) {
				t.Errorf("%q: no fact finding for %q, which the grader flags: %v", reply, w, Check(tt))
			}
		})
	}
}

// TestGraderLanguageVocabulary holds the language rule's word lists to
// the grader's: the Latin words it reads as Chinese, the addressee of a
// greeting, and the cues that say a fact is not known.
func TestGraderLanguageVocabulary(t *testing.T) {
	for _, l := range []struct {
		name string
		hook []string
	}{{"plainLatin", plainLatin}, {"hedges", unknownCues}} {
		t.Run(l.name, func(t *testing.T) {
			grader, err := stringsOf(graderSource, l.name)
			if err != nil {
				t.Fatal(err)
			}
			a, b := slices.Sorted(slices.Values(grader)), slices.Sorted(slices.Values(l.hook))
			if !slices.Equal(a, b) {
				t.Errorf("the grader's %s are %q, the hook's %q", l.name, a, b)
			}
		})
	}
	t.Run("addresseeRE", func(t *testing.T) {
		grader, err := stringsOf(graderSource, "addresseeRE")
		if err != nil {
			t.Fatal(err)
		}
		if len(grader) != 1 || grader[0] != addresseeRE.String() {
			t.Errorf("the grader's addressee pattern is %q, the hook's %q", grader, addresseeRE.String())
		}
	})
}
