package treebank

import (
	"reflect"
	"testing"
)

func TestTokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		// NLTK's doctest for NLTKWordTokenizer.tokenize.
		{"Good muffins cost $3.88 (roughly 3,36 euros)\nin New York.  Please buy me\ntwo of them.\nThanks.",
			[]string{"Good", "muffins", "cost", "$", "3.88", "(", "roughly", "3,36", "euros", ")", "in", "New", "York.", "Please", "buy", "me", "two", "of", "them.", "Thanks", "."}},
		{"They'll save and invest more.", []string{"They", "'ll", "save", "and", "invest", "more", "."}},
		{"hi, my name can't hello,", []string{"hi", ",", "my", "name", "ca", "n't", "hello", ","}},
		{`He said "DON'T GO" now.`, []string{"He", "said", "``", "DO", "N'T", "GO", "''", "now", "."}},
		{"STATE-OF-THE-ART U.S. gear", []string{"STATE-OF-THE-ART", "U.S.", "gear"}},
		// An opening apostrophe before a non-clitic is split off first, so
		// "'tis" never reaches the CONTRACTIONS3 rule.
		{"I cannot gonna 'tis", []string{"I", "can", "not", "gon", "na", "'", "tis"}},
		{"it's 't is", []string{"it", "'s", "'t", "is"}},
		{"'Hello' said 'em", []string{"'", "Hello", "'", "said", "'", "em"}},
		{"“Quoted” text…", []string{"“", "Quoted", "”", "text…"}},
		{"", nil},
	}
	for _, c := range cases {
		got := Tokenize(c.in)
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Tokenize(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
