package ifeval

import (
	"strings"
	"testing"
)

type checkCase struct {
	name     string
	id       string
	kw       map[string]any
	response string
	want     bool
}

// pureCases need no sentence or language model.
var pureCases = []checkCase{
	// keywords:existence — case-insensitive substring, no word boundaries.
	{"existence all present", "keywords:existence", map[string]any{"keywords": []any{"war", "peace"}}, "War and PEACE.", true},
	{"existence inside word", "keywords:existence", map[string]any{"keywords": []any{"war"}}, "software", true},
	{"existence missing", "keywords:existence", map[string]any{"keywords": []any{"war", "tolstoy"}}, "war and peace", false},
	{"existence multiword spacing", "keywords:existence", map[string]any{"keywords": []any{"new york"}}, "New  York", false},
	{"existence unicode fold", "keywords:existence", map[string]any{"keywords": []any{"café"}}, "CAFÉ au lait", true},

	// keywords:frequency — non-overlapping substring count.
	{"frequency at least", "keywords:frequency", map[string]any{"keyword": "cat", "frequency": 3, "relation": "at least"}, "Cat, catalog, concatenate.", true},
	{"frequency less than", "keywords:frequency", map[string]any{"keyword": "cat", "frequency": 3, "relation": "less than"}, "Cat, catalog, concatenate.", false},
	{"frequency non-overlapping", "keywords:frequency", map[string]any{"keyword": "aa", "frequency": 2, "relation": "at least"}, "aaa", false},
	{"frequency stripped keyword", "keywords:frequency", map[string]any{"keyword": " dog ", "frequency": 1, "relation": "at least"}, "hotdog", true},

	// keywords:forbidden_words — Unicode word boundaries.
	{"forbidden exact", "keywords:forbidden_words", map[string]any{"forbidden_words": []any{"rock"}}, "Rock on", false},
	{"forbidden hyphen", "keywords:forbidden_words", map[string]any{"forbidden_words": []any{"rock"}}, "rock-solid", false},
	{"forbidden plural ok", "keywords:forbidden_words", map[string]any{"forbidden_words": []any{"rock"}}, "rocks and rocky", true},
	{"forbidden unicode letter is a word char", "keywords:forbidden_words", map[string]any{"forbidden_words": []any{"rock"}}, "rocké", true},
	{"forbidden later occurrence", "keywords:forbidden_words", map[string]any{"forbidden_words": []any{"rock"}}, "rocky rock", false},
	{"forbidden empty response", "keywords:forbidden_words", map[string]any{"forbidden_words": []any{"rock"}}, "", true},

	// keywords:letter_frequency — code points of the lowercased response.
	{"letter at least", "keywords:letter_frequency", map[string]any{"letter": "Q", "let_frequency": 2, "let_relation": "at least"}, "Quick quiz", true},
	{"letter less than", "keywords:letter_frequency", map[string]any{"letter": "q", "let_frequency": 2, "let_relation": "less than"}, "Quick quiz", false},
	{"letter hash literal", "keywords:letter_frequency", map[string]any{"letter": "#", "let_frequency": 4, "let_relation": "at least"}, "# a\n## b\n# c", true},
	{"letter bang literal", "keywords:letter_frequency", map[string]any{"letter": "!", "let_frequency": 6, "let_relation": "at least"}, "Wow!!", false},

	// length_constraints:number_paragraphs — *** dividers, exact count.
	{"paragraphs three", "length_constraints:number_paragraphs", map[string]any{"num_paragraphs": 3}, "a\n***\nb\n***\nc", true},
	{"paragraphs leading divider ignored", "length_constraints:number_paragraphs", map[string]any{"num_paragraphs": 2}, "***\na\n***\nb\n***", true},
	{"paragraphs empty middle fails", "length_constraints:number_paragraphs", map[string]any{"num_paragraphs": 2}, "a\n***\n***\nb", false},
	{"paragraphs four stars split", "length_constraints:number_paragraphs", map[string]any{"num_paragraphs": 2}, "a****b", true},
	{"paragraphs bold splits", "length_constraints:number_paragraphs", map[string]any{"num_paragraphs": 1}, "a ***bold*** b", false},
	{"paragraphs wrong count", "length_constraints:number_paragraphs", map[string]any{"num_paragraphs": 2}, "one paragraph", false},

	// length_constraints:number_words — \w+ runs.
	{"words at least", "length_constraints:number_words", map[string]any{"num_words": 5, "relation": "at least"}, "don't e-mail 3.14", true},
	{"words less than", "length_constraints:number_words", map[string]any{"num_words": 3, "relation": "less than"}, "日本語 テキスト", true},

	// length_constraints:nth_paragraph_first_word.
	{"nth first word", "length_constraints:nth_paragraph_first_word", map[string]any{"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "Then"}, "First.\n\n\"Then, we go.\"", true},
	{"nth contraction", "length_constraints:nth_paragraph_first_word", map[string]any{"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "it"}, "It's here.\n\nNext.", true},
	{"nth bold fails", "length_constraints:nth_paragraph_first_word", map[string]any{"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "it"}, "**It** is.\n\nNext.", false},
	{"nth count mismatch", "length_constraints:nth_paragraph_first_word", map[string]any{"num_paragraphs": 3, "nth_paragraph": 1, "first_word": "first"}, "First.\n\nSecond.", false},
	{"nth triple newline keeps count", "length_constraints:nth_paragraph_first_word", map[string]any{"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "second"}, "First.\n\n\nSecond.", true},
	{"nth blank piece", "length_constraints:nth_paragraph_first_word", map[string]any{"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "second"}, "First.\n\n\n\nSecond.", false},

	// detectable_content:number_placeholders.
	{"placeholders", "detectable_content:number_placeholders", map[string]any{"num_placeholders": 3}, "[name] at [address], see [link](x) and []", true},
	{"placeholders not across lines", "detectable_content:number_placeholders", map[string]any{"num_placeholders": 1}, "[name\n]", false},

	// detectable_content:postscript.
	{"ps marker", "detectable_content:postscript", map[string]any{"postscript_marker": "P.S."}, "Body.\n\nP.S. more", true},
	{"ps lowercase spaced", "detectable_content:postscript", map[string]any{"postscript_marker": "P.P.S"}, "Body. p. p. s extra", true},
	{"ps missing", "detectable_content:postscript", map[string]any{"postscript_marker": "P.S."}, "Body only. PS no dots", false},
	{"ps custom marker", "detectable_content:postscript", map[string]any{"postscript_marker": "Note:"}, "x\nNOTE: y", true},

	// detectable_format:number_bullet_lists.
	{"bullets stars", "detectable_format:number_bullet_lists", map[string]any{"num_bullets": 2}, "* one\n* two\n**bold** line", true},
	{"bullets dashes and rule", "detectable_format:number_bullet_lists", map[string]any{"num_bullets": 3}, "- a\n- b\n---", true},
	{"bullets numbered ignored", "detectable_format:number_bullet_lists", map[string]any{"num_bullets": 0}, "1. a\n• b", true},
	{"bullets italic counts", "detectable_format:number_bullet_lists", map[string]any{"num_bullets": 1}, "*italic* start", true},

	// detectable_format:constrained_response.
	{"constrained yes", "detectable_format:constrained_response", nil, "Well... My answer is yes.", true},
	{"constrained no period", "detectable_format:constrained_response", nil, "My answer is yes", false},

	// detectable_format:number_highlighted_sections.
	{"highlights single and double", "detectable_format:number_highlighted_sections", map[string]any{"num_highlights": 2}, "*a* and **b**", true},
	{"highlights empty ignored", "detectable_format:number_highlighted_sections", map[string]any{"num_highlights": 1}, "** and * *", false},
	{"highlights not across lines", "detectable_format:number_highlighted_sections", map[string]any{"num_highlights": 1}, "*a\nb*", false},

	// detectable_format:multiple_sections.
	{"sections", "detectable_format:multiple_sections", map[string]any{"section_spliter": "Section", "num_sections": 2}, "Section 1\nx\nSection 2\ny", true},
	{"sections roman fails", "detectable_format:multiple_sections", map[string]any{"section_spliter": "Section", "num_sections": 2}, "Section I\nx\nSection II\ny", false},
	{"sections case sensitive", "detectable_format:multiple_sections", map[string]any{"section_spliter": "SECTION", "num_sections": 1}, "Section 1", false},

	// detectable_format:json_format.
	{"json object", "detectable_format:json_format", nil, `{"a": 1}`, true},
	{"json fenced", "detectable_format:json_format", nil, "```json\n{\"a\": [1, 2]}\n```", true},
	{"json fenced upper", "detectable_format:json_format", nil, "```JSON\n[1]\n```", true},
	{"json scalar", "detectable_format:json_format", nil, `"just a string"`, true},
	{"json nan", "detectable_format:json_format", nil, `{"x": NaN, "y": -Infinity}`, true},
	{"json minus nan invalid", "detectable_format:json_format", nil, `-NaN`, false},
	{"json nan inside string kept", "detectable_format:json_format", nil, `{"NaN": "Infinity"}`, true},
	{"json text before fence", "detectable_format:json_format", nil, "Here:\n```json\n{}\n```", false},
	{"json trailing text", "detectable_format:json_format", nil, `{"a": 1} done`, false},
	{"json duplicate keys", "detectable_format:json_format", nil, `{"a": 1, "a": 2}`, true},

	// detectable_format:title.
	{"title", "detectable_format:title", nil, "<<Poem of Joy>>\ntext", true},
	{"title blank", "detectable_format:title", nil, "<< >> text", false},
	{"title across lines", "detectable_format:title", nil, "<<a\nb>>", false},

	// combination:two_responses.
	{"two responses", "combination:two_responses", nil, "A\n******\nB", true},
	{"two responses same", "combination:two_responses", nil, "A\n******\nA ", false},
	// Seven asterisks split once; the spare "*" joins the second piece.
	{"two responses seven stars", "combination:two_responses", nil, "A\n*******\nB", true},
	{"two responses three pieces", "combination:two_responses", nil, "A\n******\nB\n******\nC", false},
	{"two responses blank middle", "combination:two_responses", nil, "A\n******\n******\nB", false},
	{"two responses outer blank ok", "combination:two_responses", nil, "******\nA\n******\nB\n******", true},

	// combination:repeat_prompt.
	{"repeat prompt", "combination:repeat_prompt", map[string]any{"prompt_to_repeat": "Write a poem."}, "  write a POEM. Here it is", true},
	{"repeat prompt changed", "combination:repeat_prompt", map[string]any{"prompt_to_repeat": "Write a poem."}, "Write a poem! Here", false},

	// startend:end_checker.
	{"end phrase", "startend:end_checker", map[string]any{"end_phrase": "Any other questions?"}, "Done. any other questions?\" \n", true},
	{"end phrase trailing punctuation", "startend:end_checker", map[string]any{"end_phrase": "Any other questions?"}, "Any other questions?.", false},

	// startend:quotation.
	{"quotation", "startend:quotation", nil, " \"Hello\" ", true},
	{"quotation curly", "startend:quotation", nil, "“Hello”", false},
	{"quotation single char", "startend:quotation", nil, "\"", false},

	// change_case case tests fail before any language detection.
	{"capital not upper", "change_case:english_capital", nil, "Hello", false},
	{"lowercase not lower", "change_case:english_lowercase", nil, "Hello", false},

	// punctuation:no_comma.
	{"no comma", "punctuation:no_comma", nil, "一，二、三", true},
	{"comma", "punctuation:no_comma", nil, "a, b", false},
}

func TestPureCheckers(t *testing.T) {
	for _, c := range pureCases {
		if got := follows(t, nil, c.id, c.kw, c.response); got != c.want {
			t.Errorf("%s: %s(%q) = %v, want %v", c.name, c.id, c.response, got, c.want)
		}
	}
}

// TestModelCheckers covers the checkers that use Punkt, the Treebank
// tokenizer or langdetect.
func TestModelCheckers(t *testing.T) {
	ev := evaluator(t)
	cases := []checkCase{
		{"sentences less than", "length_constraints:number_sentences", map[string]any{"num_sentences": 3, "relation": "less than"}, "Mr. Smith came. He left.", true},
		{"sentences at least", "length_constraints:number_sentences", map[string]any{"num_sentences": 3, "relation": "at least"}, "One. Two! Three?", true},
		{"sentences abbreviation", "length_constraints:number_sentences", map[string]any{"num_sentences": 2, "relation": "at least"}, "Dr. Who is here", false},
		{"capital words", "change_case:capital_word_frequency", map[string]any{"capital_frequency": 4, "capital_relation": "at least"}, "I met the USA team. DON'T panic.", true},
		{"capital words hyphen", "change_case:capital_word_frequency", map[string]any{"capital_frequency": 2, "capital_relation": "less than"}, "STATE-OF-THE-ART gear", true},
		{"capital words less than", "change_case:capital_word_frequency", map[string]any{"capital_frequency": 2, "capital_relation": "less than"}, "NASA and ESA", false},
		{"english capital", "change_case:english_capital", nil, "THIS IS AN ENGLISH SENTENCE ABOUT THE WEATHER.", true},
		{"english capital german", "change_case:english_capital", nil, "DAS IST EIN DEUTSCHER SATZ ÜBER DAS WETTER.", false},
		{"english lowercase", "change_case:english_lowercase", nil, "this is an english sentence about the weather.", true},
		{"english lowercase digits only", "change_case:english_lowercase", nil, "123", false},
		{"language", "language:response_language", map[string]any{"language": "fr"}, "Ceci est une phrase tout à fait ordinaire en français.", true},
		{"language wrong", "language:response_language", map[string]any{"language": "fr"}, "This is plainly English text about nothing in particular.", false},
		{"language undetectable counts as followed", "language:response_language", map[string]any{"language": "ko"}, "12345 !!!", true},
	}
	for _, c := range cases {
		if got := follows(t, ev, c.id, c.kw, c.response); got != c.want {
			t.Errorf("%s: %s(%q) = %v, want %v", c.name, c.id, c.response, got, c.want)
		}
	}
}

func TestCountHelpers(t *testing.T) {
	for s, want := range map[string]int{
		"":                       0,
		"don't":                  2,
		"e-mail 3.14":            4,
		"日本語 テキスト":               2,
		"नमस्ते":                 2, // the virama and vowel sign (Mn, Mc) are not word characters
		"snake_case x2":          2,
		"  spaces\tand\nlines  ": 3,
	} {
		if got := CountWords(s); got != want {
			t.Errorf("CountWords(%q) = %d, want %d", s, got, want)
		}
	}
	for s, want := range map[string]int{
		"*x*":            1,
		"**x**":          1,
		"***x***":        2, // "*x*" once and "**x**" once, as Python's findall sees them
		"*a* *b* **c**":  3,
		"* * ** **":      0,
		"*multi\nline*":  0,
		"text *one* two": 1,
	} {
		if got := CountHighlights(s); got != want {
			t.Errorf("CountHighlights(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestLooseCandidates(t *testing.T) {
	got := looseCandidates("Sure!\n*a*\nb\nBye")
	want := []string{"Sure!\n*a*\nb\nBye", "Sure!\na\nb\nBye", "*a*\nb\nBye", "Sure!\n*a*\nb", "*a*\nb", "a\nb\nBye", "Sure!\na\nb", "a\nb"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("looseCandidates = %q, want %q", got, want)
	}
	if c := looseCandidates("one line"); c[2] != "" || c[3] != "" || c[4] != "" {
		t.Errorf("single line candidates = %q", c)
	}
}

// TestStrictAndLoose checks the protocol: empty responses fail everything,
// loose mode forgives a preamble line and markdown asterisks.
func TestStrictAndLoose(t *testing.T) {
	ev := evaluator(t)
	prompts := []Prompt{
		{Key: 1, InstructionIDs: []string{"punctuation:no_comma", "detectable_format:title"}, Kwargs: []map[string]any{{}, {}}},
		{Key: 2, InstructionIDs: []string{"startend:quotation"}, Kwargs: []map[string]any{{}}},
		{Key: 3, InstructionIDs: []string{"keywords:existence"}, Kwargs: []map[string]any{{"keywords": []any{"bold text"}}}},
		{Key: 4, InstructionIDs: []string{"punctuation:no_comma"}, Kwargs: []map[string]any{{}}},
	}
	responses := []Response{
		{Response: " \n\t"},
		{Response: "Here is my answer:\n\"Quoted\""},
		{Response: "this is **bold** text"},
		{Response: "no commas at all"},
	}
	rep, err := ev.Evaluate(t.Context(), prompts, responses)
	if err != nil {
		t.Fatal(err)
	}
	wantStrict := [][]bool{{false, false}, {false}, {false}, {true}}
	wantLoose := [][]bool{{false, false}, {true}, {true}, {true}}
	for i, p := range rep.Prompts {
		if !equalBools(p.Strict, wantStrict[i]) || !equalBools(p.Loose, wantLoose[i]) {
			t.Errorf("prompt %d: strict %v loose %v, want %v %v", p.Key, p.Strict, p.Loose, wantStrict[i], wantLoose[i])
		}
	}
	if rep.PromptStrict != (Accuracy{1, 4}) || rep.InstStrict != (Accuracy{1, 5}) ||
		rep.PromptLoose != (Accuracy{3, 4}) || rep.InstLoose != (Accuracy{3, 5}) {
		t.Errorf("accuracies %+v %+v %+v %+v", rep.PromptStrict, rep.InstStrict, rep.PromptLoose, rep.InstLoose)
	}
	if len(rep.Categories) != 4 || rep.Categories[0].Name != "detectable_format" {
		t.Errorf("categories %+v", rep.Categories)
	}
	if len(rep.Instructions) != 4 || rep.Instructions[3].Name != "startend:quotation" {
		t.Errorf("instructions %+v", rep.Instructions)
	}
}

func TestLetterCompat(t *testing.T) {
	// Share the loaded models; only the options differ.
	compat := *evaluator(t)
	compat.opts = Options{RandomLetterCompat: true, LetterSeed: 7}
	ev := &compat
	prompts := []Prompt{{Key: 1, InstructionIDs: []string{"keywords:letter_frequency"},
		Kwargs: []map[string]any{{"letter": "#", "let_frequency": 1, "let_relation": "at least"}}}}
	responses := []Response{{Response: "####"}}
	a, err := ev.Evaluate(t.Context(), prompts, responses)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ev.Evaluate(t.Context(), prompts, responses)
	if err != nil {
		t.Fatal(err)
	}
	// "####" has no ASCII letter, so whichever letter is drawn, it fails.
	if a.Prompts[0].Strict[0] || !equalBools(a.Prompts[0].Loose, b.Prompts[0].Loose) {
		t.Errorf("compat verdicts %v / %v", a.Prompts[0], b.Prompts[0])
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWordTokenize checks nltk.word_tokenize (Punkt then Treebank) against
// NLTK's own tests and doctest.
func TestWordTokenize(t *testing.T) {
	ev := evaluator(t)
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Good muffins cost $3.88\nin New York.  Please buy me\ntwo of them.\n\nThanks.",
			[]string{"Good", "muffins", "cost", "$", "3.88", "in", "New", "York", ".", "Please", "buy", "me", "two", "of", "them", ".", "Thanks", "."}},
		{"This is a, *weird sentence with *asterisks in it.",
			[]string{"This", "is", "a", ",", "*", "weird", "sentence", "with", "*", "asterisks", "in", "it", "."}},
		{"Why did dotdot.. not get tokenized but dotdotdot... did? How about manydots.....",
			[]string{"Why", "did", "dotdot", "..", "not", "get", "tokenized", "but", "dotdotdot", "...", "did", "?", "How", "about", "manydots", "....."}},
		{"The 'v', I've been fooled but I'll seek revenge.",
			[]string{"The", "'", "v", "'", ",", "I", "'ve", "been", "fooled", "but", "I", "'ll", "seek", "revenge", "."}},
		{"'v' 're'", []string{"'", "v", "'", "'re", "'"}},
		// nltk/test/tokenize.doctest
		{"On a $50,000 mortgage of 30 years at 8 percent, the monthly payment would be $366.88.",
			[]string{"On", "a", "$", "50,000", "mortgage", "of", "30", "years", "at", "8", "percent", ",", "the", "monthly", "payment", "would", "be", "$", "366.88", "."}},
		{"\"We beat some pretty good teams to get here,\" Slocum said.",
			[]string{"``", "We", "beat", "some", "pretty", "good", "teams", "to", "get", "here", ",", "''", "Slocum", "said", "."}},
		{"Well, we couldn't have this predictable, cliche-ridden, \"Touched by an Angel\" (a show creator John Masius worked on) wanna-be if she didn't.",
			[]string{"Well", ",", "we", "could", "n't", "have", "this", "predictable", ",", "cliche-ridden", ",", "``", "Touched", "by", "an", "Angel", "''", "(", "a", "show", "creator", "John", "Masius", "worked", "on", ")", "wanna-be", "if", "she", "did", "n't", "."}},
		{"I cannot cannot work under these conditions!", []string{"I", "can", "not", "can", "not", "work", "under", "these", "conditions", "!"}},
		{"The company spent $30,000,000 last year.", []string{"The", "company", "spent", "$", "30,000,000", "last", "year", "."}},
		{"The company spent 40.75% of its income last year.", []string{"The", "company", "spent", "40.75", "%", "of", "its", "income", "last", "year", "."}},
		{"He arrived at 3:00 pm.", []string{"He", "arrived", "at", "3:00", "pm", "."}},
		{"I bought these items: books, pencils, and pens.", []string{"I", "bought", "these", "items", ":", "books", ",", "pencils", ",", "and", "pens", "."}},
		{"Though there were 150, 100 of them were old.", []string{"Though", "there", "were", "150", ",", "100", "of", "them", "were", "old", "."}},
		{"There were 300,000, but that wasn't enough.", []string{"There", "were", "300,000", ",", "but", "that", "was", "n't", "enough", "."}},
		{"I called Dr. Jones. I called Dr. Jones.", []string{"I", "called", "Dr.", "Jones", ".", "I", "called", "Dr.", "Jones", "."}},
		{"Ich muss unbedingt daran denken, Mehl, usw. fur einen Kuchen einzukaufen. Ich muss.",
			[]string{"Ich", "muss", "unbedingt", "daran", "denken", ",", "Mehl", ",", "usw", ".", "fur", "einen", "Kuchen", "einzukaufen", ".", "Ich", "muss", "."}},
	} {
		if got := ev.wordTokens(c.in); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("word_tokenize(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestEmptyResponseFailsEverything: the protocol fails every instruction on
// an empty or blank response, even those whose checker alone would pass
// (no_comma, forbidden_words, "less than" counts, undetectable language).
func TestEmptyResponseFailsEverything(t *testing.T) {
	ev := evaluator(t)
	for _, blank := range []string{"", " \n\t\u3000\x1c"} {
		var prompts []Prompt
		var responses []Response
		for i, id := range instructionIDs {
			kw := fuzzKwargs[id]
			if kw == nil {
				kw = map[string]any{}
			}
			prompts = append(prompts, Prompt{Key: i, InstructionIDs: []string{id}, Kwargs: []map[string]any{kw}})
			responses = append(responses, Response{Response: blank})
		}
		rep, err := ev.Evaluate(t.Context(), prompts, responses)
		if err != nil {
			t.Fatal(err)
		}
		if rep.InstStrict.Correct != 0 || rep.InstLoose.Correct != 0 || rep.InstStrict.Total != len(instructionIDs) {
			t.Errorf("blank %q: strict %+v loose %+v, want 0 followed of %d", blank, rep.InstStrict, rep.InstLoose, len(instructionIDs))
		}
	}
	if !follows(t, ev, "punctuation:no_comma", nil, "") {
		t.Error("the raw no_comma checker should pass an empty string; only the protocol fails it")
	}
}
