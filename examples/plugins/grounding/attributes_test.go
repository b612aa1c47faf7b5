package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"strconv"
	"strings"
	"testing"
)

func TestAttributeValues(t *testing.T) {
	cream, honey := []Call{creamCoLookup}, []Call{honeyLookup}
	runCases(t, []checkCase{
		{"ingredient", "zh", "面霜什么成分", "雅诗轻盈面霜主要成分是维生素C，适合油性肌肤。", cream, "", "", ""},
		{"ingredient en", "en", "What's in the cream?", "Its main ingredient is vitamin C, for oily skin.", cream, "", "", ""},
		{"origin", "zh", "蜂蜜产地哪里", "初漾丝绒蜂蜜产地是新疆，保质期6个月。", honey, "", "", ""},
		{"origin en", "en", "Where is the honey from?", "It comes from Xinjiang.", honey, "", "", ""},

		{"other ingredient", "zh", "面霜什么成分", "主要成分是神经酰胺，很温和。", cream, KindFact, "神经酰胺", "维生素C"},
		{"other ingredient en", "en", "What's in the cream?", "It is made with hyaluronic acid.", cream, KindFact, "hyaluronic acid", "vitamin C"},
		{"other skin type", "en", "Is it for dry skin?", "Yes, it suits dry skin.", cream, KindFact, "dry skin", "oily skin"},
		{"other skin type zh", "zh", "干皮能用吗", "适合干性肌肤。", cream, KindFact, "干性肌肤", "油性肌肤"},
		{"other origin", "en", "Where is the honey from?", "It comes from Inner Mongolia.", honey, KindFact, "Inner Mongolia", "Xinjiang"},
		{"other origin zh", "zh", "蜂蜜产地哪里", "产地是云南。", honey, KindFact, "云南", "新疆"},
		{"ingredient without a lookup", "zh", "面霜什么成分", "主要成分是烟酰胺。", nil, KindFact, "烟酰胺", "no tool result"},
	})
}

// A feature or the allergen list stated of an item whose catalog does not
// state it, as the bundled model put it on air (issue #18).
func TestFeaturesTheCatalogStates(t *testing.T) {
	hoodie := []Call{hoodieLookup}
	washable := []Call{call("product_lookup", `{"query":"卫衣"}`, `{"attributes":{"care":"machine washable","洗涤":"可机洗"},"currency":"CNY",`+
		`"found":true,"item_id":"p-hoodie","name":"加绒卫衣","price":"159","variants":["M","L","XL"]}`)}
	runCases(t, []checkCase{
		{"stated", "en", "Can I wash the hoodie?", "Yes, the hoodie is machine washable.", washable, "", "", ""},
		{"stated zh", "zh", "卫衣能机洗吗", "加绒卫衣可机洗哦。", washable, "", "", ""},
		{"allergens listed", "zh", "坚果礼盒含花生吗", "坚果礼盒含花生，过敏的朋友慎拍哦。", []Call{nutsLookup}, "", "", ""},
		{"allergens not known, said so", "zh", "精华有过敏原吗", "过敏原没有标注，我帮您确认一下。", []Call{serumLookup}, "", "", ""},

		{"not stated", "en", "Any coupon for the hoodie?", "Coupon time: the machine washable total is 159 yuan in total.", hoodie, KindFact, "machine washable",
			"no tool result says so"},
		{"not stated zh", "zh", "卫衣能机洗吗", "加绒卫衣可机洗，还抗菌。", hoodie, KindFact, "可机洗", "no tool result says so"},
		{"allergens not known", "zh", "精华会过敏吗", "精华不含过敏原，放心用。", []Call{serumLookup}, KindFact, "过敏原", "states the item's allergens"},
	})
	// The yes/no specs of a shop catalog's kinds: job3's step 100 answered
	// "耳环能退吗" with "是的，可叠放。" of pearl earrings.
	earrings := []Call{call("product_lookup", `{"query":"耳环"}`, `{"attributes":{"pearl":"8mm"},"currency":"CNY","found":true,`+
		`"item_id":"JWL-8641","name":"喵屿耳夹式珍珠耳环","price":"297.90","specs":[{"key":"pearl","label":"pearl size","label_zh":"珍珠直径",`+
		`"unit":"mm","value":8}],"variants":[]}`)}
	box := []Call{call("product_lookup", `{"query":"收纳箱"}`, `{"attributes":{"stackable":"yes","volume":"35L"},"currency":"CNY","found":true,`+
		`"item_id":"HOM-1","name":"折叠收纳箱","price":"39.90","specs":[{"key":"stackable","label":"stackable","label_zh":"可叠放","value":true},`+
		`{"key":"volume","label":"volume","label_zh":"容积","unit":"L","value":35}],"variants":[]}`)}
	runCases(t, []checkCase{
		{"a spec's feature stated", "zh", "收纳箱能叠吗", "折叠收纳箱可叠放，容积35L。", box, "", "", ""},
		{"a spec's feature stated, en", "en", "is the box stackable?", "Yes, it is stackable.", box, "", "", ""},
		{"a spec's feature of another item", "zh", "耳环能退吗", "是的，可叠放。", earrings, KindFact, "可叠放", "no tool result says so"},
		{"dishwasher safe of nothing", "en", "can the earrings be returned?", "Yes, they are dishwasher safe.", earrings, KindFact, "dishwasher safe", "no tool result says so"},
	})
}

// TestAttributeVocabulary holds the check's yes/no vocabulary to the
// room grader's (trainer/liveroom FindUnbacked, issue #18): each phrase
// its claimGroups knows, stated of an item whose results do not state it,
// is a fact finding here too. The plugin cannot import trainer code, so
// the test reads the grader's source.
func TestAttributeVocabulary(t *testing.T) {
	phrases, err := graderClaimPhrases("../../../trainer/liveroom/unbacked.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(phrases) < 100 {
		t.Fatalf("read %d phrases of the grader's claimGroups, want its whole list", len(phrases))
	}
	plain := []Call{call("product_lookup", `{"query":"收纳盒"}`, `{"attributes":{"capacity":"10L","容量":"10升"},"currency":"CNY",`+
		`"found":true,"item_id":"HM-1","name":"简约收纳盒","price":"39","variants":[]}`)}
	for _, p := range phrases {
		t.Run(p, func(t *testing.T) {
			lang, reply := "en", "The storage box contains "+p+"."
			if hasHan(p) {
				lang, reply = "zh", "简约收纳盒含有"+p+"。"
			}
			tt := turn(lang, "介绍一下收纳盒", reply, plain...)
			for _, f := range Check(tt) {
				if f.Kind == KindFact && strings.Contains(strings.ToLower(f.Phrase), strings.ToLower(p)) {
					return
				}
			}
			t.Errorf("%q: no fact finding for %q, which the grader flags: %v", reply, p, Check(tt))
		})
	}
}

// graderClaimPhrases reads the phrases of the claim groups in the Go
// source at path: the string arguments of each g(topic, words...) call
// in func claimGroups, less an allergen group's catalog code.
func graderClaimPhrases(path string) ([]string, error) {
	file, err := parser.ParseFile(gotoken.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("grader vocabulary: %w", err)
	}
	var body *ast.BlockStmt
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "claimGroups" {
			body = fn.Body
		}
	}
	if body == nil {
		return nil, fmt.Errorf("grader vocabulary: %s has no func claimGroups", path)
	}
	var phrases []string
	var bad error
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || len(c.Args) < 2 {
			return true
		}
		if fn, ok := c.Fun.(*ast.Ident); !ok || fn.Name != "g" {
			return true
		}
		words := c.Args[1:]
		if topic, ok := c.Args[0].(*ast.Ident); ok && topic.Name == "topicAllergen" {
			words = words[1:]
		}
		for _, w := range words {
			lit, ok := w.(*ast.BasicLit)
			if !ok || lit.Kind != gotoken.STRING {
				bad = fmt.Errorf("grader vocabulary: a word of claimGroups is not a string literal: %T", w)
				return false
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				bad = fmt.Errorf("grader vocabulary: %s: %w", lit.Value, err)
				return false
			}
			phrases = append(phrases, s)
		}
		return true
	})
	return phrases, bad
}
