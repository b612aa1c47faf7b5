package examples_test

import (
	"os"
	"testing"
	"time"

	"github.com/livehat/livehat/internal/testfixture"
)

// transferDemoFloor is how many of the transfer demo's twelve questions
// the shipped model answers right; issue #19 asks for at least ten. The
// test holds the shipped model to what it does, so that a new one that
// answers fewer is caught, and logs every miss with its turn. The first
// generation answered one (the blocks' price); the second answers nine
// since a stock check's variant is held to the catalog's (it asked for a
// "中号" the puzzle does not have), and eleven since the grounding check's
// last attempt says the fact asked before a true reply that leaves it out
// (the puzzle's pieces, where the blocks ship from: the hook's words, not
// the model's); the earrings' returns are still missed, the model checks
// their stock instead (trainer/REPRODUCTION.md, "The transfer demo").
const transferDemoFloor = 11

// TestBundledModelOnATransferCatalog asks the bundled model twelve
// questions a new merchant's viewers ask — price, coupon, stock, restock,
// dispatch, returns, specs and link, in Chinese and English — over a
// catalog of the transfer family (testdata/transfer-demo-catalog.json,
// liveroom.TransferCatalog(9008), committed so that it stays what it is
// when the generator changes): toys and jewellery, kinds, fields and
// phrasings no training room has. The stream is served as the demo
// stream is (see TestBundledModelAnswersTheDemoStream), the grounding
// check on: whatever is wrong may be missing, never on air, and every
// viewer gets an answer in words.
func TestBundledModelOnATransferCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example WASM plugins and runs the bundled model; skipped with -short")
	}
	doc, err := os.ReadFile("testdata/transfer-demo-catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	// The catalog's restock date (2026-12-24) is in the future on this day.
	now := func() time.Time { return time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC) }
	quiet := testfixture.QuietLogger()
	ps, err := testfixture.DemoSandbox(t, quiet).Plugins(doc, now)
	if err != nil {
		t.Fatal(err)
	}
	stream := demoStream{model: demoModel(t), harness: testfixture.DemoHarness(t), plugins: ps, demoCatalog: catalogItems(t, doc)}
	cases := []demoCase{
		{"城堡积木多少钱？", []string{"product_lookup"}, []string{"212.9"}, ""},
		{"how much are the pearl earrings", []string{"product_lookup"}, []string{"297.9"}, ""},
		{"积木有券吗", []string{"product_lookup", "coupon_check(TOY-9827)"}, []string{"213"}, ""},
		{"any coupon on the jigsaw puzzle?", []string{"product_lookup", "coupon_check(TOY-1624)"}, []string{"81"}, ""},
		{"珍珠耳环还有货吗", []string{"product_lookup", "check_stock(JWL-8641)"}, []string{"售罄|卖完|没货|无货"}, ""},
		{"when is the jigsaw puzzle back in stock", []string{"product_lookup", "check_stock(TOY-1624)"}, []string{"12-24|December 24|Dec 24|24 December"}, ""},
		{"拼图拍了多久发货", []string{"product_lookup", "shipping_policy(TOY-1624)"}, []string{"36"}, ""},
		{"where do the building blocks ship from", []string{"product_lookup", "shipping_policy(TOY-9827)"}, []string{"Yiwu|义乌"}, ""},
		{"耳环能退吗", []string{"product_lookup", "shipping_policy(JWL-8641)"}, []string{"7"}, ""},
		{"how many pieces is the puzzle", []string{"product_lookup"}, []string{"500"}, ""},
		{"积木链接发一下", []string{"product_lookup", "send_link(TOY-9827)"}, []string{"2号|置顶"}, ""},
		{"link for the puzzle pls", []string{"product_lookup", "send_link(TOY-1624)"}, []string{"link"}, ""},
	}
	right := 0
	for _, c := range cases {
		problems := stream.ask(t, c)
		for _, p := range problems {
			t.Log(p)
		}
		if len(problems) == 0 {
			right++
		}
	}
	t.Logf("%d of %d answered right (issue #19 asks for 10)", right, len(cases))
	if right < transferDemoFloor {
		t.Errorf("%d of %d answered right; the shipped model answers %d", right, len(cases), transferDemoFloor)
	}
}
