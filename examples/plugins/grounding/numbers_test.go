package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/livehat/livehat/sdk"
)

func TestParseCN(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"一百九十九", 199, true},
		{"九十九", 99, true},
		{"十", 10, true},
		{"十五", 15, true},
		{"两百", 200, true},
		{"两百五", 250, true},
		{"一百零五", 105, true},
		{"一千二百", 1200, true},
		{"一万二", 12000, true},
		{"两万三千", 23000, true},
		{"一九九", 199, true},
		{"九点九", 9.9, true},
		{"零", 0, true},
		{"万", 0, false},
		{"百", 0, false},
		{"点五", 0, false},
		{"九点", 9, true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := parseCN(c.in)
			if ok != c.ok || (ok && got != c.want) {
				t.Fatalf("parseCN(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

// TestScanForms reads each way a number is written into what it states.
func TestScanForms(t *testing.T) {
	cases := []struct {
		text string
		kind tokenKind
		v    float64
	}{
		{"199", tokNumber, 199},
		{"¥199", tokMoney, 199},
		{"￥199", tokMoney, 199},
		{"199元", tokMoney, 199},
		{"199块", tokMoney, 199},
		{"199块钱", tokMoney, 199},
		{"一百九十九", 0, 0}, // Chinese numerals alone are words
		{"只要一百九十九", tokPriced, 199},
		{"一百九十九元", tokMoney, 199},
		{"两百", 0, 0},
		{"两百块", tokMoney, 200},
		{"九块九", tokMoney, 9.9},
		{"19块9", tokMoney, 19.9},
		{"9块99", tokMoney, 9.99},
		{"199.00", tokNumber, 199},
		{"1,299元", tokMoney, 1299},
		{"1.2万元", tokMoney, 12000},
		{"RMB 199", tokMoney, 199},
		{"199 yuan", tokMoney, 199},
		{"$19", tokForeign, 19},
		{"19 dollars", tokForeign, 19},
		{"满300减50", tokSpendOff, 300},
		{"8折", tokZhe, 20},
		{"8.5折", tokZhe, 15},
		{"八五折", tokZhe, 15},
		{"20% off", tokZhe, 20},
		{"2%", tokPercent, 2},
		{"百分之二十", tokPercent, 20},
		{"12月10日", tokDate, 0},
		{"2026-12-10", tokDate, 0},
		{"12/10", tokDate, 0},
		{"Dec 10", tokDate, 0},
		{"10th of December", tokDate, 0},
		{"晚上8点", tokTime, 20},
		{"20:30", tokTime, 20},
		{"48小时", tokDuration, 48},
		{"2天", tokDuration, 48},
		{"两天", tokDuration, 48},
		{"7-day", tokDuration, 168},
		{"within 48 hours", tokDuration, 48},
		{"12个月", tokDuration, 12},
		{"1 year", tokDuration, 12},
		{"次日", tokDuration, 24},
		{"还剩8件", tokStockCount, 8},
		{"only 8 left", tokStockCount, 8},
		{"身高170", tokHeight, 170},
		{"1米75", tokHeight, 175},
		{"1.7米", tokHeight, 170},
		{"体重130斤", tokWeight, 65},
		{"65kg", tokWeight, 65},
		{"30ml", tokSpec, 30},
		{"SPF50+", tokSpec, 50},
		{"3号链接", tokLink, 3},
		{"link 3", tokLink, 3},
		{"两件", tokQuantity, 2},
		{"L码", tokSize, 0},
		{"size XL", tokSize, 0},
		{"SE107", 0, 0},           // an id, not a number
		{"entyp-5", tokNumber, 5}, // a hyphen does not make an id: the turn's ids are claimed before
		{"第1", 0, 0},
		{"3D", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			text := normalize(c.text)
			toks := scan(text, make([]bool, len(text)))
			if c.kind == 0 {
				if len(toks) > 0 {
					t.Fatalf("%q: want no token, got %+v", c.text, toks)
				}
				return
			}
			if len(toks) != 1 || toks[0].kind != c.kind || (c.v != 0 && toks[0].v != c.v) {
				t.Fatalf("%q: got %+v, want one token of kind %d value %v", c.text, toks, c.kind, c.v)
			}
		})
	}
}

func TestScanReadsDatesAndSizes(t *testing.T) {
	for text, want := range map[string]date{"12月10日": {0, 12, 10}, "2026-12-10": {2026, 12, 10}, "12/10": {0, 12, 10},
		"Dec 10, 2026": {2026, 12, 10}, "2026年12月10日": {2026, 12, 10}} {
		toks := scan(text, make([]bool, len(text)))
		if len(toks) != 1 || toks[0].date != want {
			t.Errorf("%q: %+v, want %v", text, toks, want)
		}
	}
	for text, want := range map[string]string{"L码": "L", "穿XL": "XL", "size m": "M", "M size": "M", "get an S": "S", "38码": "38"} {
		toks := scan(text, make([]bool, len(text)))
		if len(toks) != 1 || toks[0].size != want {
			t.Errorf("%q: %+v, want size %s", text, toks, want)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"１９９元": "199元", "ＸＬ码": "XL码", "价格：１９９，好！": "价格：199，好！", "a\u3000b": "a b", "plain": "plain"} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzScan holds the scanner to its contract on any text: tokens lie
// inside the text, in claimed bytes, without overlapping one another,
// and a run of more than maxDigits digits is read as no number: one
// unreadable token holds it (issue #18).
func FuzzScan(f *testing.F) {
	for _, s := range []string{"¥199", "九块九包邮", "满300减50", "身高170体重130斤", "Dec 10, 2026", "还剩8件", "1米75", "八五折", "19块9件",
		strings.Repeat("3", 120), "现在5150555555555555555", "1,111,111,111,111,111元", "SKU12345678901234567", "２０２６-12-10 " + strings.Repeat("9", 16)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		used := make([]bool, len(text))
		toks := scan(text, used)
		seen := make([]bool, len(text))
		for _, tok := range toks {
			if tok.start < 0 || tok.end > len(text) || tok.start >= tok.end {
				t.Fatalf("%q: token %+v out of bounds", text, tok)
			}
			for i := tok.start; i < tok.end; i++ {
				if seen[i] || !used[i] {
					t.Fatalf("%q: token %+v overlaps or is unclaimed", text, tok)
				}
				seen[i] = true
			}
		}
		for _, run := range longDigitRuns(text) {
			if !slices.ContainsFunc(toks, func(tok token) bool {
				return tok.kind == tokUnreadable && tok.start <= run[0] && run[1] <= tok.end
			}) {
				t.Fatalf("%q: the %d digits at %d are read as a number: %+v", text, run[1]-run[0], run[0], toks)
			}
		}
	})
}

// longDigitRuns returns the runs of more than maxDigits ASCII digits.
func longDigitRuns(text string) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && isDigit(text[j]) {
			j++
		}
		if j-i > maxDigits {
			out = append(out, [2]int{i, j})
		}
		i = max(j, i+1)
	}
	return out
}

// FuzzCheck runs the whole decision on any reply: it never panics, its
// decision is valid, findings quote the reply, a reply with a run of more
// digits than a number has is never allowed, and a rewrite passes the
// check it was made for.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"玻尿酸精华只要128元！", `<tool_call>{"name":"x"}</tool_call>`, "M码有货", "Glow Serum is $5",
		"链接已经帮您置顶啦！", "不含花生", "{name} 3号链接 12/10 48小时", "\xff\xfe元", "１２８元", strings.Repeat("3", 400) + "…",
		"现在515055555555555555555555", "55550650555", "199.0000000000000001元", "玻尿酸行间只要199元", `"quantity": 1`,
		"今天主推玻尿酸descriptionUS", "Hydrating Match is 89 yuan.", "加绒卫衣159元。"} {
		f.Add(s, "精华多少钱", 1)
	}
	f.Add("加绒卫衣159元。", "卫衣的材质是什么？", 1)
	f.Add("It ships from Qingdao, Shandlist.", "where does the serum ship from", 2)
	f.Add("这款没有标注过敏原信息，我帮您确认一下。", "坚果含不含乳制品", 2)
	f.Add("抱歉，这款已经售罄了。", "卫衣啥时候补货", 2)
	calls := []Call{serumLookup, serumCoupon, hoodieLookup, hoodieStock, nutsLookup}
	f.Fuzz(func(t *testing.T, reply, message string, attempt int) {
		tt := turn("zh", message, reply, calls...)
		tt.Attempt = attempt
		d := Decide(tt)
		if err := d.Validate(); err != nil {
			t.Fatalf("%q: invalid decision %+v: %v", reply, d, err)
		}
		text := normalize(reply)
		if len(longDigitRuns(text)) > 0 && d.Action == sdk.ActionAllow {
			t.Fatalf("%q: allowed with a run of more than %d digits", reply, maxDigits)
		}
		for _, fd := range Check(tt) {
			// Broken text is quoted escaped, as Go quotes it.
			if !strings.Contains(text, fd.Phrase) && !(fd.Kind == KindResidue && strings.Contains(strconv.QuoteToGraphic(text), fd.Phrase)) {
				t.Fatalf("%q: finding %v quotes what the reply does not say", reply, fd)
			}
		}
		if d.Text != "" {
			if !utf8.ValidString(d.Text) {
				t.Fatalf("rewrite %q is not UTF-8", d.Text)
			}
			tt.Reply = d.Text
			if fs := Check(tt); len(fs) > 0 {
				t.Fatalf("rewrite %q of %q is unbacked: %v", d.Text, reply, fs)
			}
		}
	})
}

// FuzzResult feeds any bytes to the check as a tool's result: whatever
// a tool returns, the check decides without panicking, and a rewrite it
// puts on air passes the check itself.
func FuzzResult(f *testing.F) {
	for _, c := range []Call{serumLookup, hoodieLookup, hoodieStock, flaskStock, nutsShipping} {
		f.Add(c.Result)
	}
	f.Add([]byte(`{"stock":{"M":"x"},"size_chart":[{"size":"L","height":"185+"}],"coupon":[{"amount":"a"}],"s":"\ud83d\u0041"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		tt := turn("zh", "精华多少钱", "精华199元", call("product_lookup", `{"item_id":"p-serum"}`, string(raw)))
		tt.Attempt, tt.Attempts = 2, 2
		d := Decide(tt)
		if d.Text != "" {
			tt.Reply = d.Text
			if fs := Check(tt); len(fs) > 0 {
				t.Fatalf("rewrite %q on result %q is unbacked: %v", d.Text, raw, fs)
			}
		}
	})
}

func TestStatedLinks(t *testing.T) {
	cases := []struct {
		reply string
		want  []int
	}{
		{"3号链接拍就行", []int{3}},
		{"拍３号链接", []int{3}},
		{"链接 5 已经上好了", []int{5}},
		{"It's link #4, and Link 2 too", []int{4, 2}},
		{"二号宝贝和2号链接", []int{2}},
		{"修护面霜现在259元，满300减50", nil},
		{"The cream is 259 yuan", nil},
		{"38号码的鞋", nil},
	}
	for _, c := range cases {
		t.Run(c.reply, func(t *testing.T) {
			if got := statedLinks(c.reply); !slices.Equal(got, c.want) {
				t.Fatalf("statedLinks = %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzRuneSet holds the rune set's fast reading of UTF-8 to the decoder:
// a set answers for every literal as a set of decoded runes would, and a
// search of literals finds what strings.Contains finds.
func FuzzRuneSet(f *testing.F) {
	for _, s := range []string{"修护面霜259元", "ｘ１\xe4\xb8", "\xed\xa0\x80\xe0\x80\x80ok", "", "€£¥ and 😀"} {
		f.Add(s, "面")
	}
	f.Fuzz(func(t *testing.T, text, literal string) {
		var want runeSet
		for _, r := range text {
			want[r&0xFF] = true
		}
		if got := newRuneSet(text); *got != want {
			t.Fatalf("newRuneSet(%q) differs from the decoded runes' set", text)
		}
		r, _ := utf8.DecodeRuneInString(literal)
		if got := want.mayHold(literal); got != want[r&0xFF] {
			t.Fatalf("mayHold(%q) = %v over %q, decoded %v", literal, got, text, want[r&0xFF])
		}
		words := []string{"面", "a"}
		if literal != "" { // no pattern searches for the empty word
			words = append(words, literal)
		}
		found := slices.ContainsFunc(words, func(w string) bool { return strings.Contains(text, w) })
		if got := newLiterals(words...).in(text, newRuneSet(text)); got != found {
			t.Fatalf("literals %q in %q = %v, want %v", words, text, got, found)
		}
		key, n := runeKey(literal)
		if _, size := utf8.DecodeRuneInString(literal); literal != "" && (key != byte(r) || n != size) {
			t.Fatalf("runeKey(%q) = %#x, %d; decoded %#x, %d", literal, key, n, byte(r), size)
		}
	})
}

func TestDurationKey(t *testing.T) {
	cases := []struct {
		key, unit string
		ok        bool
	}{
		{"ships_within_days", "day", true},
		{"dispatch_hours", "hour", true},
		{"battery_hours_total", "hour", true},
		{"warranty_months", "month", true},
		{"shelf_life_years", "year", true},
		{"cook_minutes", "minute", true},
		{"price", "", false},
		{"monthly_fee", "", false},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			if unit, ok := durationKey(c.key); unit != c.unit || ok != c.ok {
				t.Fatalf("durationKey = %q, %v; want %q, %v", unit, ok, c.unit, c.ok)
			}
		})
	}
}
