package liveroom

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/catalog"
	"github.com/livehat/livehat/runtime"
)

// HostModelName is what the console and the CLI call Host, so that nobody
// mistakes its answers for a trained model's.
const HostModelName = "rule-based host"

// StreamContext is the stream context a live session of this room shows
// the model, as the console builds it from a stream's catalog: the
// featured item and the items on sale by their Chinese names.
func (r *Room) StreamContext() []harness.ContextItem {
	names, ids := make([]string, len(r.Items)), make([]string, len(r.Items))
	for i, it := range r.Items {
		names[i], ids[i] = it.NameZH, it.ID
	}
	featured, _ := r.Item(r.Featured)
	return []harness.ContextItem{runtime.FeaturedItem(featured.NameZH, featured.ID), runtime.ItemsOnSale(names, ids)}
}

// Host is a rule-based live-stream host: a runtime.Model that answers
// free viewer text in Chinese and English without any weights. It is the
// room's Expert generalised from generated questions to whatever viewers
// type: it recognises the question (price, coupon, size, stock, shipping,
// link, specs, chit-chat), and then acts as a model must under the
// harness it is given — it reads the tools of the request, loads the
// matching reply skill, looks the item up and calls the tool the question
// needs, each through a tool call the runtime executes (so hooks, schemas
// and the sandboxed plugins all run), and finally states the facts of the
// tool results in the viewer's language. It never states a number no tool
// returned. It is stateless: every Generate call reads the turn so far
// from the request's messages and takes the next step.
//
// The console serves it with `serve --model host`: a weightless stand-in
// for a model, for demos and tests of everything around the model.
type Host struct{}

// Generate takes the next step of the turn in req.
func (Host) Generate(ctx context.Context, req runtime.Request) (runtime.Response, error) {
	if err := ctx.Err(); err != nil {
		return runtime.Response{}, err
	}
	if len(req.Messages) == 0 {
		return runtime.Response{}, fmt.Errorf("liveroom: host: the request has no messages")
	}
	t := readTurn(req.Messages)
	if t.text == "" {
		// A warm-up request or a conversation without a viewer message.
		return runtime.Response{Content: ""}, nil
	}
	tools := readTools(req.Tools)
	if call, ok := t.next(tools); ok {
		args, err := json.Marshal(call.args)
		if err != nil {
			return runtime.Response{}, fmt.Errorf("liveroom: host: %w", err)
		}
		return runtime.Response{ToolCalls: []harness.ToolCall{{Name: call.name, Arguments: args}}}, nil
	}
	return runtime.Response{Content: t.reply()}, nil
}

// intent is the kind of message a host answers.
type intent string

const (
	intentPrice    intent = "price"
	intentCoupon   intent = "coupon"
	intentSize     intent = "size"
	intentStock    intent = "stock"
	intentShipping intent = "shipping"
	intentLink     intent = "link"
	intentSpecs    intent = "specs"
	intentChat     intent = "chitchat"
	intentAbuse    intent = "abuse"
	// intentSpam solicits contact off the platform: no reply.
	intentSpam intent = "spam"
	// intentCompare asks which of two items is cheaper.
	intentCompare intent = "compare"
	// intentAllergen and intentKeeps are answered from the lookup, like
	// specs: whether the item contains an allergen, how long it keeps.
	intentAllergen intent = "allergen"
	intentKeeps    intent = "keeps"
)

// intentWords are the keywords of each intent, zh and en, in the order
// they are tried: the most specific first ("券后多少钱" is a coupon
// question even though it asks "how much").
func intentWords() []struct {
	intent intent
	words  []string
} {
	return []struct {
		intent intent
		words  []string
	}{
		{intentSpam, []string{"wechat", "whatsapp", "telegram", "dm me", "add me", "加微信", "加v", "vx", "私聊", "+q", "代购", "代拍", "followers"}},
		{intentAbuse, []string{"傻逼", "垃圾主播", "骗子", "笨蛋", "智障", "脑残", "滚", "idiot", "stupid", "scam", "garbage", "moron", "shut up"}},
		{intentLink, []string{"link", "链接", "连接", "怎么买", "在哪买", "哪里买", "在哪拍", "小黄车", "where to buy", "how to buy", "how do i buy", "how can i buy", "where do i buy", "pin "}},
		{intentAllergen, []string{"过敏", "allerg", "含不含", "含有", "里有", "contain", "in it", "peanut", "dairy", "gluten", "sesame", "shellfish",
			" soy", "wheat", " egg", " fish", " milk", "花生", "麸质", "芝麻", "小麦", "大豆", "鸡蛋"}},
		{intentCoupon, []string{"coupon", "voucher", "discount code", "券", "优惠", "满减", "到手", "final price", "after discount"}},
		{intentKeeps, []string{"保质期", "保值期", "能放多久", "过期", "expiry", "expire", "best before", "shelf life", "keep"}},
		{intentShipping, shippingWords()},
		{intentStock, stockWords()},
		{intentSize, []string{"size", "尺码", "码", "身高", "体重", "cm", "kg", "厘米", "公斤", "斤", "穿什么", "fit me"}},
		{intentSpecs, append([]string{"material", "ingredient", "volume", "spf", "spec", "made of", "what is it", "成分", "材质", "容量", "规格", "多大", "功效", "介绍"},
			unstatedFacts()...)},
		{intentPrice, priceWords()},
	}
}

func shippingWords() []string {
	return []string{"ship", "deliver", "dispatch", "return", "refund", "send it back", " back if", "go out", "发货", "发出", "多久发", "几时发",
		"快递", "物流", "退货", "退换", "退款", "能退", "退不", "退吗", "包邮", "运费", "邮费", "postage", "几天到"}
}

func stockWords() []string {
	return []string{"stock", "sold out", "available", "still around", "left for", "still order", "restock", "come back", "be back",
		"有货", "库存", "没货", "售罄", "卖完", "还有吗", "有没有货", "还有没有", "现货", "断货", "还能拍", "补货", "再上", "几号补", "有货吗"}
}

func priceWords() []string {
	return []string{"price", "how much", "cost", "cheap", "expensive", "yuan", "going for", "run for", "damage", "paying", "total", "deal",
		"多少钱", "价格", "几块", "什么价", "啥价", "卖多少", "咋卖", "多少米", "价位", "一共多少", "便宜", "贵", "元"}
}

// compareRE finds two items weighed against each other by price: "A和B
// 哪个便宜", "Which is cheaper, A or B?", "A or B, which costs less?".
var compareRE = []*regexp.Regexp{
	regexp.MustCompile(`^(.+?)(?:和|跟|还是)(.+?)哪个(?:更)?(?:便宜|贵|划算)`),
	regexp.MustCompile(`(?i)^which (?:is|one is) (?:cheaper|more expensive), (.+?) or (.+?)\??$`),
	regexp.MustCompile(`(?i)^(.+?) or (.+?), which (?:costs less|is cheaper|costs more)\??$`),
}

// compared returns the two items a message compares by price.
func compared(text string) (a, b string, ok bool) {
	t := strings.TrimSpace(text)
	for _, re := range compareRE {
		if m := re.FindStringSubmatch(t); m != nil {
			trim := func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "the ") }
			return trim(m[1]), trim(m[2]), true
		}
	}
	return "", "", false
}

// classify reads the intent of a message, and a second one it asks in
// the same breath: its price beside its stock or its shipping ("多少钱？
// 还有货吗"). A link number ("3号链接") names an item, not a wish for its
// link, so it is set aside first.
func classify(text string) (first, second intent) {
	t := strings.ToLower(partLink.ReplaceAllString(wholeLink.ReplaceAllString(strings.TrimSpace(text), " "), " "))
	first = intentChat
	if _, _, ok := compared(text); ok {
		return intentCompare, ""
	}
	for _, iw := range intentWords() {
		if containsAny(t, iw.words) {
			first = iw.intent
			break
		}
	}
	switch {
	case first == intentPrice && containsAny(t, stockWords()):
		second = intentStock
	case first == intentPrice && containsAny(t, shippingWords()):
		second = intentShipping
	case (first == intentStock || first == intentShipping) && containsAny(t, priceWords()):
		first, second = intentPrice, first
	}
	return first, second
}

// toolRole is what a tool of the request is for, found from its name and
// description, so a harness variant that renames tools still works.
type toolRole string

const (
	roleSkill    toolRole = "skill"
	roleLookup   toolRole = "lookup"
	roleStock    toolRole = "stock"
	roleCoupon   toolRole = "coupon"
	roleShipping toolRole = "shipping"
	roleLink     toolRole = "link"
)

// toolInfo is a tool of the request with the parameters the host fills.
type toolInfo struct {
	name string
	// text is the first required string parameter (query, item id).
	text string
	// item is the item-id parameter; quantity and variant are optional.
	item, quantity, variant string
	// skills are the ids a load-skill tool accepts.
	skills []string
}

type schemaProp struct {
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Enum        []string `json:"enum"`
}

type schema struct {
	Properties map[string]schemaProp `json:"properties"`
	Required   []string              `json:"required"`
}

// readTools assigns a role to each tool of the request: first by its
// name, then by its description.
func readTools(specs []harness.FunctionSpec) map[toolRole]toolInfo {
	roles := []struct {
		role  toolRole
		words []string
	}{
		{roleSkill, []string{"skill"}},
		{roleStock, []string{"stock", "inventory", "库存"}},
		{roleCoupon, []string{"coupon", "voucher", "券"}},
		{roleShipping, []string{"shipping", "deliver", "物流", "发货"}},
		{roleLink, []string{"link", "链接"}},
		{roleLookup, []string{"lookup", "find", "search", "product", "item", "查"}},
	}
	out := map[toolRole]toolInfo{}
	taken := map[string]bool{}
	for _, field := range []func(harness.FunctionSpec) string{
		func(s harness.FunctionSpec) string { return s.Function.Name },
		func(s harness.FunctionSpec) string { return s.Function.Description },
	} {
		for _, r := range roles {
			if _, done := out[r.role]; done {
				continue
			}
			for _, s := range specs {
				if taken[s.Function.Name] || !containsAny(strings.ToLower(field(s)), r.words) {
					continue
				}
				info, ok := toolOf(s)
				if !ok || (r.role == roleSkill) != (len(info.skills) > 0) {
					continue
				}
				out[r.role] = info
				taken[s.Function.Name] = true
				break
			}
		}
	}
	return out
}

func toolOf(s harness.FunctionSpec) (toolInfo, bool) {
	var sc schema
	if err := json.Unmarshal(s.Function.Parameters, &sc); err != nil {
		return toolInfo{}, false
	}
	info := toolInfo{name: s.Function.Name}
	names := make([]string, 0, len(sc.Properties))
	for n := range sc.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	// Required parameters first, in their listed order.
	ordered := append([]string(nil), sc.Required...)
	for _, n := range names {
		if !containsString(ordered, n) {
			ordered = append(ordered, n)
		}
	}
	for _, n := range ordered {
		p, ok := sc.Properties[n]
		if !ok {
			continue
		}
		lower := strings.ToLower(n + " " + p.Description)
		switch {
		case p.Type == "string" && len(p.Enum) > 0 && strings.Contains(lower, "skill"):
			info.skills, info.text = p.Enum, n
		case p.Type == "integer" || p.Type == "number":
			if info.quantity == "" && containsAny(lower, []string{"quantity", "how many", "count", "数量"}) {
				info.quantity = n
			}
		case p.Type == "string" && info.item == "" && containsAny(lower, []string{"id", "sku"}):
			info.item = n
		case p.Type == "string" && info.variant == "" && containsAny(lower, []string{"variant", "size", "color", "colour", "规格"}):
			info.variant = n
		}
		if info.text == "" && p.Type == "string" && containsString(sc.Required, n) {
			info.text = n
		}
	}
	if info.item == "" {
		info.item = info.text
	}
	return info, info.text != ""
}

// call is a tool call the host makes, with its result once the runtime
// has run it.
type call struct {
	name   string
	args   map[string]any
	result string
	done   bool
}

// turn is what the host knows of the current turn.
type turn struct {
	text      string // the viewer's message (or the strategy instruction)
	narration bool
	lang      Lang
	intent    intent
	// second is an intent asked beside the first ("多少钱？还有货吗").
	second intent
	// probe marks a question of no known intent, answered from the facts
	// of the item it names, if it names one.
	probe     bool
	calls     []call
	retries   int
	featured  struct{ name, id string }
	skillList map[string]string // skill id → description, from the prompt
}

var (
	featuredRE  = regexp.MustCompile(`(?m)` + regexp.QuoteMeta(runtime.FeaturedTitle) + `: (.+?) \(id ([^)\s]+)\)`)
	skillLineRE = regexp.MustCompile(`(?m)^\s*(?:[-*]|\d+\.)\s*([A-Za-z0-9_.\-]+): (.+)$`)
	askedByRE   = regexp.MustCompile(`^\(asked by \d+ viewers: [^)]*\)\s*`)
)

// featuredInInstructionRE finds the item a strategy instruction names
// ("… the featured item CO112 …", "主推商品CO112").
var featuredInInstructionRE = regexp.MustCompile(`(?:featured item|主推商品)\s*([A-Za-z0-9][A-Za-z0-9._-]*)`)

// narrationPrefix is how the runtime marks a strategy turn.
const narrationPrefix = "(host strategy, no viewer asked)"

// readTurn finds the current turn in a conversation: its user message
// (not a retry request after a rejected reply) and the calls since.
func readTurn(msgs []harness.Message) *turn {
	t := &turn{skillList: map[string]string{}}
	if msgs[0].Role == harness.RoleSystem {
		if m := featuredRE.FindStringSubmatch(msgs[0].Content); m != nil {
			t.featured.name, t.featured.id = m[1], m[2]
		}
		for _, m := range skillLineRE.FindAllStringSubmatch(msgs[0].Content, -1) {
			t.skillList[m[1]] = m[2]
		}
	}
	start := -1
	for k := len(msgs) - 1; k > 0; k-- {
		if msgs[k].Role != harness.RoleUser {
			continue
		}
		if isRetry(msgs, k) {
			t.retries++
			continue
		}
		start = k
		break
	}
	if start < 0 {
		return t
	}
	text := strings.TrimSpace(msgs[start].Content)
	if rest, ok := strings.CutPrefix(text, narrationPrefix); ok {
		t.narration, text = true, strings.TrimSpace(rest)
	}
	t.text = strings.TrimSpace(askedByRE.ReplaceAllString(text, ""))
	t.intent, t.second = classify(t.text)
	if t.intent == intentChat && containsAny(strings.ToLower(t.text), questionMarks()) {
		// A question in no words the host knows ("跳绳的绳长是？") may
		// still be about an item: look it up and read its facts.
		t.intent, t.probe = intentSpecs, true
	}
	t.lang = langOf(viewerWords(t.text))
	if t.narration {
		t.second = ""
		if t.featured.id == "" {
			// No stream context: the instruction names the item.
			if m := featuredInInstructionRE.FindStringSubmatch(t.text); m != nil {
				t.featured.id = m[1]
			}
		}
		// A strategy instruction names its goal first and extras after
		// ("announce the coupon … and pin its link").
		if containsAny(strings.ToLower(t.text), []string{"coupon", "券"}) {
			t.intent = intentCoupon
		}
		// The audience's language, as the runtime holds replies to it
		// (runtime.replyLang): that of the latest viewer message, else
		// that of the instruction.
		if last := lastViewerText(msgs[:start]); last != "" {
			t.lang = langOf(viewerWords(last))
		}
		if t.intent == intentChat || t.intent == intentSpecs {
			t.intent = intentPrice // "introduce the featured item": name and live price
		}
	}
	for _, m := range msgs[start+1:] {
		switch m.Role {
		case harness.RoleAssistant:
			for _, c := range m.ToolCalls {
				var args map[string]any
				_ = json.Unmarshal(c.Arguments, &args)
				t.calls = append(t.calls, call{name: c.Name, args: args})
			}
		case harness.RoleTool:
			for i := range t.calls {
				if !t.calls[i].done && t.calls[i].name == m.Name {
					t.calls[i].result, t.calls[i].done = m.Content, true
					break
				}
			}
		}
	}
	return t
}

// lastViewerText is the latest viewer message of a conversation, not a
// strategy instruction or a retry request; "" when there is none.
func lastViewerText(msgs []harness.Message) string {
	for k := len(msgs) - 1; k > 0; k-- {
		if msgs[k].Role == harness.RoleUser && !isRetry(msgs, k) && !strings.HasPrefix(strings.TrimSpace(msgs[k].Content), narrationPrefix) {
			return msgs[k].Content
		}
	}
	return ""
}

// isRetry reports whether the user message at k asks to answer again: it
// follows a reply that itself followed tool results in the same turn
// (conversation memory keeps only viewer messages and final replies).
func isRetry(msgs []harness.Message, k int) bool {
	return k >= 2 && msgs[k-1].Role == harness.RoleAssistant && len(msgs[k-1].ToolCalls) == 0 &&
		(msgs[k-2].Role == harness.RoleTool || len(msgs[k-2].ToolCalls) > 0)
}

// viewerWords is the viewer's own part of a message: without the
// paragraphs hooks inject (harness.FormatInjection: JSON, a tag, or "Note
// from …"), which are in the harness's language, not the viewer's.
func viewerWords(text string) string {
	var own []string
	for _, p := range strings.Split(text, "\n\n") {
		p = strings.TrimSpace(p)
		if !strings.HasPrefix(p, "{") && !strings.HasPrefix(p, "<") && !strings.HasPrefix(p, "Note from ") {
			own = append(own, p)
		}
	}
	if len(own) == 0 {
		return text
	}
	return strings.Join(own, "\n\n")
}

// hostLatinWordRE finds the words of a message written in Latin letters.
var hostLatinWordRE = regexp.MustCompile(`[A-Za-z]+`)

// langOf is the language a message is written in: English when it has
// no Chinese, or when it is mostly English words around a Chinese name
// ("is there milk in 猫条").
func langOf(s string) Lang {
	han := 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			han++
		}
	}
	if words := len(hostLatinWordRE.FindAllString(s, -1)); han == 0 || (words >= 3 && 2*words > han) || (words >= 2 && han <= 2) {
		return LangEN
	}
	return LangZH
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// skillFor picks the reply skill of an intent among the ids the harness
// offers: by id, then by the description the prompt lists.
func (t *turn) skillFor(ids []string) string {
	want := map[intent][]string{
		intentPrice:    {"pric"},
		intentCompare:  {"pric"},
		intentCoupon:   {"pric", "coupon"},
		intentSize:     {"size"},
		intentStock:    {"fact", "stock", "spec"},
		intentSpecs:    {"fact", "spec", "attribute"},
		intentAllergen: {"fact", "spec", "attribute"},
		intentKeeps:    {"fact", "spec", "attribute"},
		intentShipping: {"ship", "return", "deliver"},
		intentLink:     {"link", "purchase"},
		intentChat:     {"chit", "chat", "greet", "small talk"},
		intentAbuse:    {"chit", "chat", "greet", "small talk"},
		intentSpam:     {"chit", "chat", "greet", "small talk"},
	}[t.intent]
	for _, w := range want {
		for _, id := range ids {
			if strings.Contains(strings.ToLower(id), w) {
				return id
			}
		}
	}
	for _, w := range want {
		for _, id := range ids {
			if strings.Contains(strings.ToLower(t.skillList[id]), w) {
				return id
			}
		}
	}
	return ""
}

// made returns the calls already made to a tool.
func (t *turn) made(name string) []call {
	var out []call
	for _, c := range t.calls {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

// next is the tool call the turn still needs, if any.
func (t *turn) next(tools map[toolRole]toolInfo) (call, bool) {
	if sk, ok := tools[roleSkill]; ok && len(t.made(sk.name)) == 0 {
		if id := t.skillFor(sk.skills); id != "" {
			return call{name: sk.name, args: map[string]any{sk.text: id}}, true
		}
	}
	if t.intent == intentChat || t.intent == intentAbuse || t.intent == intentSpam {
		return call{}, false
	}
	lk, ok := tools[roleLookup]
	if !ok {
		return call{}, false
	}
	lookups := t.made(lk.name)
	if t.intent == intentCompare {
		a, b, _ := compared(t.text)
		if len(lookups) < 2 {
			return call{name: lk.name, args: map[string]any{lk.text: []string{a, b}[len(lookups)]}}, true
		}
		return call{}, false
	}
	item, _ := t.item(lk.name)
	switch {
	case len(lookups) == 0:
		q := t.text
		if t.narration && t.featured.id != "" {
			q = t.featured.id
		}
		return call{name: lk.name, args: map[string]any{lk.text: q}}, true
	case item == nil && len(lookups) == 1 && resultFailed(lookups[0].result):
		// A failed call is tried once more; it is not a "no such item".
		return call{name: lk.name, args: lookups[0].args}, true
	case item == nil && len(lookups) == 1 && t.featured.id != "" && !t.failed():
		// No item named: a live host answers about the featured item.
		return call{name: lk.name, args: map[string]any{lk.text: t.featured.id}}, true
	case item == nil:
		return call{}, false
	}
	id, _ := item["item_id"].(string)
	roles := map[intent][]toolRole{
		intentCoupon:   {roleCoupon},
		intentStock:    {roleStock},
		intentShipping: {roleShipping},
		intentLink:     {roleLink},
	}
	needs := slices.Concat(roles[t.intent], roles[t.second])
	switch {
	case t.narration && t.intent == intentCoupon:
		needs = []toolRole{roleCoupon, roleLink}
	case t.intent == intentPrice && quantityOf(t.text) > 1:
		// The price of several: the coupon check totals them, with any
		// multi-buy deal.
		needs = append(needs, roleCoupon)
	}
	for _, role := range needs {
		tool, ok := tools[role]
		if !ok {
			continue
		}
		if made := t.made(tool.name); len(made) == 1 && resultFailed(made[0].result) {
			return call{name: tool.name, args: made[0].args}, true // once more
		} else if len(made) > 0 {
			continue
		}
		args := map[string]any{tool.item: id}
		if tool.quantity != "" {
			if n := quantityOf(t.text); n > 1 {
				args[tool.quantity] = n
			}
		}
		if tool.variant != "" {
			if v := t.variantOf(item); v != "" {
				args[tool.variant] = v
			}
		}
		return call{name: tool.name, args: args}, true
	}
	return call{}, false
}

// item is the first lookup result that found an item.
func (t *turn) item(lookupName string) (map[string]any, bool) {
	for _, c := range t.made(lookupName) {
		var r map[string]any
		if json.Unmarshal([]byte(c.result), &r) != nil {
			continue
		}
		if found, _ := r["found"].(bool); found {
			return r, true
		}
	}
	return nil, false
}

// result is the decoded result of the first successful call whose
// result has the given key.
func (t *turn) result(key string) (map[string]any, bool) {
	for _, c := range t.calls {
		var r map[string]any
		if json.Unmarshal([]byte(c.result), &r) != nil {
			continue
		}
		if _, ok := r[key]; ok {
			return r, true
		}
	}
	return nil, false
}

// failed reports whether a tool call of the turn failed.
func (t *turn) failed() bool {
	return slices.ContainsFunc(t.calls, func(c call) bool { return c.done && resultFailed(c.result) })
}

// resultFailed reports whether a tool result is an error, broken JSON or
// empty: nothing to answer from. Plain text (a loaded skill) is a result.
func resultFailed(content string) bool {
	c := strings.TrimSpace(content)
	if c == "" {
		return true
	}
	if !strings.HasPrefix(c, "{") {
		return false
	}
	var r map[string]any
	if json.Unmarshal([]byte(c), &r) != nil {
		return true
	}
	_, bad := r["error"]
	return bad || len(r) == 0
}

var (
	quantityRE = regexp.MustCompile(`(?i)(?:买|拍|buy|get|order|grab|take)\s*(\d{1,2}|[两二三四五六七八九十])\s*(?:件|个|支|瓶|盒|套|pcs|pieces|of)?|(\d{1,2}|[两二三四五六七八九十])\s*(?:件|个|支|瓶|盒|套|pcs|pieces|x |of )`)
	heightRE   = regexp.MustCompile(`(?i)(1\d{2})\s*(?:cm|厘米|公分)|身高\s*(1\d{2})|1米(\d{2})`)
	weightRE   = regexp.MustCompile(`(?i)(\d{2,3}(?:\.\d)?)\s*(kg|公斤|千克|斤)|体重\s*(\d{2,3}(?:\.\d)?)`)
)

// quantityOf reads how many items the viewer wants; 1 when unsaid.
func quantityOf(text string) int {
	m := quantityRE.FindStringSubmatch(text)
	if m == nil {
		return 1
	}
	s := m[1]
	if s == "" {
		s = m[2]
	}
	if n, err := strconv.Atoi(s); err == nil {
		return min(max(n, 1), 99)
	}
	return map[string]int{"两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}[s]
}

// variantOf is the variant of the item the viewer named, if any.
func (t *turn) variantOf(item map[string]any) string {
	vs, _ := item["variants"].([]any)
	lower := strings.ToLower(t.text)
	best := ""
	for _, v := range vs {
		name, _ := v.(string)
		if name != "" && name != "standard" && strings.Contains(lower, strings.ToLower(name)) && len(name) > len(best) {
			best = name
		}
	}
	return best
}

// measures reads the viewer's height (cm) and weight (kg), 0 when unsaid.
func measures(text string) (height, weight float64) {
	if m := heightRE.FindStringSubmatch(text); m != nil {
		switch {
		case m[1] != "":
			height, _ = strconv.ParseFloat(m[1], 64)
		case m[2] != "":
			height, _ = strconv.ParseFloat(m[2], 64)
		default:
			cm, _ := strconv.ParseFloat(m[3], 64)
			height = 100 + cm
		}
	}
	if m := weightRE.FindStringSubmatch(text); m != nil {
		if m[1] != "" {
			weight, _ = strconv.ParseFloat(m[1], 64)
			if m[2] == "斤" {
				weight /= 2
			}
		} else {
			weight, _ = strconv.ParseFloat(m[3], 64)
			if weight > 120 { // 体重110 is said in jin more often than kg
				weight /= 2
			}
		}
	}
	return height, weight
}

// say picks the phrasing of the turn's language.
func (t *turn) say(en, zh string) string {
	if t.lang == LangZH {
		return zh
	}
	return en
}

func str(m map[string]any, key string) string {
	switch v := m[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// currency is the spoken currency word for a lookup result.
func (t *turn) currency(item map[string]any) string {
	c := str(item, "currency")
	switch {
	case c == "" || c == "CNY" || c == "RMB":
		return t.say(" yuan", "元")
	case t.lang == LangZH:
		return c
	}
	return " " + c
}

// name is how the reply names the item: its catalog name, or "it" in an
// English reply when the name is Chinese.
func (t *turn) name(item map[string]any) string {
	n := str(item, "name")
	if t.lang == LangEN && hasHan(n) {
		return "It"
	}
	return n
}

// reply states the facts of the tool results in the viewer's language.
func (t *turn) reply() string {
	short := t.retries > 0 // a rejected reply is answered again more plainly
	switch t.intent {
	case intentSpam:
		return "" // nothing to say to a spammer on air
	case intentAbuse:
		return t.say("Sorry you feel that way. Let's keep the chat friendly.", "抱歉让您不开心，我们友好聊天哦。")
	case intentChat:
		if t.featured.name != "" && !short {
			return t.say(fmt.Sprintf("Thank you for joining! Today's pick is %s; ask me anything about it.", t.featured.name),
				fmt.Sprintf("谢谢支持！今天主推%s，有问题随时问我哦。", t.featured.name))
		}
		return t.say("Thank you for joining! Ask me anything about today's items.", "谢谢支持！商品问题随时问我哦。")
	}
	var item map[string]any
	for _, c := range t.calls {
		var r map[string]any
		if json.Unmarshal([]byte(c.result), &r) == nil {
			if found, _ := r["found"].(bool); found {
				item = r
				break
			}
		}
	}
	if item == nil {
		if t.failed() {
			return UnavailableReply(t.lang)
		}
		return t.say("Which item do you mean? Tell me its name and I'll check right away.", "您问的是哪款商品呢？告诉我名字我马上查。")
	}
	if t.intent == intentCompare {
		return t.compareReply()
	}
	if t.second != "" {
		// The price, then what was asked beside it.
		then := t.stockReply()
		if t.second == intentShipping {
			then = t.shippingReply()
		}
		price, cur := str(item, "price"), t.currency(item)
		return t.say(fmt.Sprintf("%s is %s%s now. %s", t.name(item), price, cur, then), fmt.Sprintf("%s现在%s%s。%s", t.name(item), price, cur, then))
	}
	switch t.intent {
	case intentCoupon:
		return t.couponReply(item)
	case intentPrice:
		if _, ok := t.result("eligible"); ok {
			return t.couponReply(item)
		}
	case intentSize:
		return t.sizeReply(item)
	case intentStock:
		return t.stockReply()
	case intentShipping:
		return t.shippingReply()
	case intentAllergen:
		return t.allergenReply(item)
	case intentKeeps:
		return t.keepsReply(item)
	case intentLink:
		if r, ok := t.result("pinned"); ok && r["pinned"] == true {
			return t.say("I've pinned the link at the top of the chat for you!", "链接已经帮您置顶啦！")
		}
		return t.say("The link is in the shopping bag below, look for "+t.name(item)+".", "链接在下方小黄车里，找"+str(item, "name")+"就可以。")
	case intentSpecs:
		return t.specsReply(item)
	}
	return t.priceReply(item, short)
}

func (t *turn) priceReply(item map[string]any, short bool) string {
	price, list, cur := str(item, "price"), str(item, "list_price"), t.currency(item)
	name := t.name(item)
	switch {
	case t.narration:
		return t.say(fmt.Sprintf("Today's pick is %s, only %s%s in the live room!", str(item, "name"), price, cur),
			fmt.Sprintf("今天主推%s，直播间只要%s%s！", name, price, cur))
	case short || list == "":
		return t.say(fmt.Sprintf("%s is %s%s now.", name, price, cur), fmt.Sprintf("%s现在%s%s。", name, price, cur))
	}
	return t.say(fmt.Sprintf("%s is %s%s in the live room right now, down from %s%s. Tap the link to order!", name, price, cur, list, cur),
		fmt.Sprintf("%s原价%s%s，直播间现在%s%s，喜欢就拍！", name, list, cur, price, cur))
}

// couponReply states the coupon result: the item's coupon, or a better
// one the order reaches, and a multi-buy deal for the quantity. Totals
// for several items are said without the currency word: the compliance
// hook checks every "N元" against the item's unit prices.
func (t *turn) couponReply(item map[string]any) string {
	r, ok := t.result("eligible")
	if !ok && t.failed() {
		return UnavailableReply(t.lang)
	}
	if !ok {
		return t.priceReply(item, true)
	}
	qty, _ := r["quantity"].(float64)
	cur := t.currency(item)
	unit := qty <= 1
	money := func(v string) string {
		if unit {
			return v + cur
		}
		return v
	}
	deal := ""
	var totals []string
	deals, _ := r["multi_buy"].([]any)
	for _, d := range deals {
		m, _ := d.(map[string]any)
		if total := str(m, "total_with_deal"); total != "" {
			totals = append(totals, total)
		}
	}
	if len(totals) > 0 {
		deal = t.say(fmt.Sprintf("With the multi-buy deal, %d of them are %s in total.", int(qty), strings.Join(totals, " or ")),
			fmt.Sprintf("参加多件优惠，%d件一共%s。", int(qty), strings.Join(totals, "或")))
	}
	if deal != "" && t.intent == intentPrice {
		return deal // "what do 3 cost": the deal answers it
	}
	and := func(s string) string {
		if deal == "" {
			return s
		}
		return s + t.say(" ", "") + deal
	}
	coupon, _ := r["coupon"].(map[string]any)
	off := func(c map[string]any) string {
		if d := str(c, "discount"); d != "" {
			return d // a percent coupon: what it takes off this order
		}
		return str(c, "amount")
	}
	link := ""
	if t.narration {
		if p, ok := t.result("pinned"); ok && p["pinned"] == true {
			link = t.say(" The link is pinned!", "链接已经置顶！")
		}
	}
	if best, ok := r["best_coupon"].(map[string]any); ok && !t.narration {
		return and(t.say(fmt.Sprintf("Yes! A coupon takes %s off, so you pay %s.", off(best), money(str(best, "total_after_coupon"))),
			fmt.Sprintf("可以用券，减%s，券后到手%s！", off(best), money(str(best, "total_after_coupon")))))
	}
	switch {
	case coupon == nil:
		return and(t.say(fmt.Sprintf("There is no coupon for it right now; it is %s.", money(str(r, "total"))),
			fmt.Sprintf("这款暂时没有优惠券，%s。", money(str(r, "total"))))) + link
	case t.narration:
		return t.say(fmt.Sprintf("Coupon time: %s off orders from %s!", off(coupon), str(coupon, "min_spend")),
			fmt.Sprintf("优惠券来啦：满%s减%s！", str(coupon, "min_spend"), off(coupon))) + link
	case r["eligible"] == true && str(coupon, "discount") != "":
		return and(t.say(fmt.Sprintf("Yes! A coupon takes %s off, so you pay %s.", off(coupon), money(str(r, "total_after_coupon"))),
			fmt.Sprintf("可以用券，减%s，券后到手%s！", off(coupon), money(str(r, "total_after_coupon")))))
	case r["eligible"] == true:
		return and(t.say(fmt.Sprintf("Yes! A coupon takes %s off orders from %s, so you pay %s.", str(coupon, "amount"), str(coupon, "min_spend"), money(str(r, "total_after_coupon"))),
			fmt.Sprintf("可以用满%s减%s的券，券后到手%s！", str(coupon, "min_spend"), str(coupon, "amount"), money(str(r, "total_after_coupon")))))
	}
	return and(t.say(fmt.Sprintf("Not eligible yet: the coupon needs an order of %s, %s more.", str(coupon, "min_spend"), str(r, "missing_spend")),
		fmt.Sprintf("还不满足用券条件，满%s才能用，还差%s。", str(coupon, "min_spend"), str(r, "missing_spend"))))
}

func (t *turn) sizeReply(item map[string]any) string {
	chart, _ := item["size_chart"].([]any)
	if len(chart) == 0 {
		if said, ok := t.typedSpec(item); ok {
			return said // "pearl size": a fact, not a size to choose
		}
		return t.say("This item has no sizes to choose from.", "这款不分尺码，放心拍。")
	}
	h, w := measures(t.text)
	if h == 0 && w == 0 {
		return t.say("Tell me your height and weight and I'll recommend a size.", "告诉我身高体重，我帮您推荐尺码哦。")
	}
	for _, row := range chart {
		r, _ := row.(map[string]any)
		in := func(v float64, lo, hi string) bool {
			a, _ := r[lo].(float64)
			b, _ := r[hi].(float64)
			return v == 0 || (v >= a && v <= b)
		}
		if in(h, "min_height_cm", "max_height_cm") && in(w, "min_weight_kg", "max_weight_kg") {
			size := str(r, "size")
			return t.say(fmt.Sprintf("From the size chart I'd recommend size %s for you.", size), fmt.Sprintf("按尺码表建议您穿%s码。", size))
		}
	}
	return t.say("No size on the chart fits those measures exactly; please ask customer service.", "尺码表里没有完全合适的码，建议问问客服哦。")
}

func (t *turn) stockReply() string {
	r, ok := t.result("stock")
	if !ok {
		return UnavailableReply(t.lang)
	}
	stock, _ := r["stock"].(map[string]any)
	states, _ := r["stock_state"].(map[string]any)
	total := 0.0
	counted := true
	names := make([]string, 0, len(stock))
	for name, v := range stock {
		n, isCount := v.(float64)
		total += n
		counted = counted && isCount
		names = append(names, name)
	}
	sort.Strings(names)
	variant := ""
	if len(names) == 1 && names[0] != "standard" {
		variant = names[0]
	}
	dated := false
	for _, k := range []string{"item_stock_state", "restock_date", "variant_restock_dates", "presale_ship_date"} {
		_, has := r[k]
		dated = dated || has
	}
	if counted && states == nil && !dated && !(total == 0 && t.asksRestock()) {
		// Counts only, as version 1 catalogs state stock.
		what, whatZH := variantWords(variant)
		switch {
		case total == 0 && variant != "":
			return t.say(fmt.Sprintf("Sorry, %s is sold out right now.", what), fmt.Sprintf("抱歉，%s已经售罄了。", whatZH))
		case total == 0:
			return t.say("Sorry, that one is sold out right now.", "抱歉，这款已经售罄了。")
		case total < lowStock:
			return t.say("Yes, it is in stock, but stock is limited, so be quick!", "还有货，但库存紧张，喜欢要抓紧！")
		case variant != "":
			return t.say(fmt.Sprintf("Yes, %s is in stock.", what), fmt.Sprintf("%s有货的，放心拍！", whatZH))
		}
		return t.say("Yes, it is in stock, plenty for everyone.", "有货的，库存充足，放心拍！")
	}
	// The state of each entry: stated, else read from its count.
	stateOf := func(name string) string {
		if st := str(states, name); st != "" {
			return st
		}
		switch n, ok := stock[name].(float64); {
		case !ok:
			return NotStated
		case n == 0:
			return string(catalog.SoldOut)
		case n < catalog.LowStockBelow:
			return string(catalog.LowStock)
		}
		return string(catalog.InStock)
	}
	state := str(r, "item_stock_state")
	if variant != "" || state == "" {
		var all []string
		for _, n := range names {
			all = append(all, stateOf(n))
		}
		state = NotStated
		for _, st := range []catalog.StockState{catalog.InStock, catalog.LowStock, catalog.Presale, catalog.SoldOut} {
			if slices.Contains(all, string(st)) {
				state = string(st)
				break
			}
		}
	}
	what, whatZH := variantWords(variant)
	switch catalog.StockState(state) {
	case catalog.SoldOut:
		restock := str(r, "restock_date")
		if dates, ok := r["variant_restock_dates"].(map[string]any); ok && variant != "" && str(dates, variant) != "" {
			restock = str(dates, variant)
		}
		if d, err := catalog.ParseDate(restock); err == nil {
			return t.say(fmt.Sprintf("Sorry, %s is sold out right now; it is due back on %s.", what, enDate(d)),
				fmt.Sprintf("抱歉，%s已经售罄了，预计%s补货。", whatZH, zhDate(d)))
		}
		if t.asksRestock() {
			return t.say(fmt.Sprintf("Sorry, %s is sold out right now, and no restock date is stated; I'll check.", what),
				fmt.Sprintf("抱歉，%s已经售罄了，补货时间没有标注，我帮您确认。", whatZH))
		}
		return t.say(fmt.Sprintf("Sorry, %s is sold out right now.", what), fmt.Sprintf("抱歉，%s已经售罄了。", whatZH))
	case catalog.LowStock:
		return t.say("Yes, it is in stock, but stock is limited, so be quick!", "还有货，但库存紧张，喜欢要抓紧！")
	case catalog.InStock:
		return t.say(fmt.Sprintf("Yes, %s is in stock.", what), fmt.Sprintf("%s有货的，放心拍！", whatZH))
	case catalog.Presale:
		if d, err := catalog.ParseDate(str(r, "presale_ship_date")); err == nil {
			return t.say(fmt.Sprintf("It is on presale and ships on %s.", enDate(d)), fmt.Sprintf("这款是预售，%s发货。", zhDate(d)))
		}
		return t.say("It is on presale.", "这款是预售。")
	}
	return t.say("Its stock is not stated; I'll check and get back to you.", "库存商家没有标注，我确认一下再告诉您。")
}

// compareReply states the prices of the two items compared and which is
// cheaper.
func (t *turn) compareReply() string {
	var items []map[string]any
	for _, c := range t.calls {
		var r map[string]any
		if json.Unmarshal([]byte(c.result), &r) == nil && r["found"] == true {
			items = append(items, r)
		}
	}
	if len(items) < 2 {
		return t.say("Which two items do you mean? Tell me their names and I'll compare them.", "您想比较哪两款呢？告诉我名字我马上查。")
	}
	a, b := items[0], items[1]
	pa, _ := strconv.ParseFloat(str(a, "price"), 64)
	pb, _ := strconv.ParseFloat(str(b, "price"), 64)
	cheaper := a
	if pb < pa {
		cheaper = b
	}
	cur := t.currency(a)
	return t.say(fmt.Sprintf("%s is %s%s and %s is %s%s, so %s is cheaper.", t.name(a), str(a, "price"), cur, t.name(b), str(b, "price"), cur, t.name(cheaper)),
		fmt.Sprintf("%s%s%s，%s%s%s，%s更便宜。", str(a, "name"), str(a, "price"), cur, str(b, "name"), str(b, "price"), cur, str(cheaper, "name")))
}

// asksRestock reports whether the viewer asks when an item comes back.
func (t *turn) asksRestock() bool {
	return containsAny(strings.ToLower(t.text), []string{"补货", "再上", "几号补", "啥时候有货", "什么时候有货", "restock", "come back", "be back"})
}

func (t *turn) shippingReply() string {
	r, ok := t.result("ships_within_days")
	if !ok {
		return UnavailableReply(t.lang)
	}
	days, fee, rd := str(r, "ships_within_days"), str(r, "shipping_fee"), str(r, "return_days")
	_, rule := r["returns"]
	_, hours := r["dispatch_hours"]
	_, from := r["ship_from"]
	if !rule && !hours && !from && days != NotStated && fee != NotStated && rd != NotStated {
		// What version 1 catalogs state, answered as always.
		shipping := t.say("free shipping", "包邮")
		if r["free_shipping"] != true {
			shipping = t.say("shipping costs "+fee, "运费"+fee)
		}
		if rd == "" || rd == "0" {
			return t.say(fmt.Sprintf("It ships within %s days with %s; it cannot be returned.", days, shipping),
				fmt.Sprintf("%s天内发货，%s，不支持无理由退货哦。", days, shipping))
		}
		return t.say(fmt.Sprintf("It ships within %s days with %s, and %s-day returns.", days, shipping, rd),
			fmt.Sprintf("%s天内发货，%s，支持%s天无理由退货。", days, shipping, rd))
	}
	lower := strings.ToLower(t.text)
	asks := func(words ...string) bool { return containsAny(lower, words) }
	askFee := asks("运费", "邮费", "包邮", "postage", "shipping cost", "free shipping", "fee")
	askFrom := asks("哪里发", "哪发", "从哪", "where", "ship from", "shipped from")
	askReturns := asks("退", "return", "refund", "send it back", " back if")
	askWhen := asks("多久", "几天", "几时", "什么时候", "啥时候", "发货", "发出", "多久发", "how fast", "how soon", "how long", "when", "dispatch", "ship out", "go out")
	if !askWhen && !askFee && !askFrom && !askReturns {
		askWhen, askReturns = true, true // "shipping?": dispatch and returns
	}
	var parts []string
	add := func(en, zh string) { parts = append(parts, t.say(en, zh)) }
	if askWhen {
		switch h := str(r, "dispatch_hours"); {
		case h != "":
			add("It ships within "+h+" hours.", h+"小时内发货")
		case days != NotStated:
			add("It ships within "+days+" days.", days+"天内发货")
		default:
			add("The dispatch time is not stated.", "发货时间商家没有标注")
		}
	}
	if askFrom {
		if from := str(r, "ship_from"); from != "" {
			en := from
			if placeEN(from) != "" {
				en = placeEN(from)
			}
			add("It ships from "+en+".", "从"+from+"发货")
		} else {
			add("Where it ships from is not stated.", "发货地商家没有标注")
		}
	}
	if askFee {
		switch {
		case fee == NotStated:
			add("The listing doesn't state a shipping fee.", "运费商家没有标注")
		case r["free_shipping"] == true:
			add("Shipping is free.", "包邮")
		default:
			add("Shipping costs "+fee+t.currency(r)+".", "运费"+fee+t.currency(r))
		}
	}
	if askReturns {
		add(t.returnsSaid(r))
	}
	if said := strings.Join(parts, ""); strings.Contains(said, "not stated") || strings.Contains(said, "doesn't state") || strings.Contains(said, "没有标注") {
		add("I'll check and get back to you.", "我确认一下再回复您")
	}
	if t.lang == LangZH {
		return strings.Join(parts, "，") + "。"
	}
	return strings.Join(parts, " ")
}

// returnsSaid states the return rule of a shipping_policy result.
func (t *turn) returnsSaid(r map[string]any) (en, zh string) {
	rule, _ := r["returns"].(map[string]any)
	rd := str(r, "return_days")
	switch {
	case rule == nil && rd == NotStated:
		return "The return rule is not stated.", "退换规则商家没有标注"
	case rd == "0" || (rule != nil && rule["accepted"] == false):
		return "It cannot be returned.", "不支持退换"
	case rule == nil:
		return "Returns within " + rd + " days, no reason needed.", "支持" + rd + "天无理由退货"
	}
	en, zh = "It can be returned", "可以退"
	if rd != NotStated && rd != "" {
		en, zh = "It can be returned within "+rd+" days", rd+"天内可以退"
		if rule["no_reason"] != NotStated {
			en, zh = en+", no reason needed", "支持"+rd+"天无理由退货"
		}
	}
	if conds, _ := rule["conditions"].([]any); len(conds) > 0 {
		var zhConds, enConds []string
		for _, c := range conds {
			zhConds = append(zhConds, fmt.Sprint(c))
			if e := conditionEN(fmt.Sprint(c)); e != "" {
				enConds = append(enConds, e)
			}
		}
		// The merchant's conditions are in the merchant's words; an
		// English reply says the common ones in English and points to
		// the others rather than mix languages.
		if len(enConds) == len(conds) {
			en += ", " + strings.Join(enConds, ", ")
		} else {
			en += ", on the conditions the listing states"
		}
		zh += "，" + strings.Join(zhConds, "，")
	}
	return en + ".", zh
}

// specAliases maps attribute keys to the words viewers use for them.
func specAliases() map[string][]string {
	return map[string][]string{
		"volume":   {"volume", "容量", "多大", "ml"},
		"material": {"material", "made of", "材质", "面料"},
		"spf":      {"spf", "防晒指数", "倍数"},
		"skin":     {"skin", "肤质"},
		"weight":   {"weight", "重量"},
		"battery":  {"battery", "续航", "电池"},
	}
}

// questionMarks are the marks of a question, in zh and en.
func questionMarks() []string {
	return []string{"?", "？", "吗", "呢", "多少", "多久", "怎么", "啥", "想问", "请问", "能说下", "是不是", "what", "how", "which", "is ", "does ", "or not"}
}

// unstatedFacts are facts viewers ask about that catalogs often leave
// out: asked and not in the item's facts, they are "not stated".
func unstatedFacts() []string {
	return []string{"保修", "warranty", "产地", "origin", "made in", "重量", "weight", "认证", "certif", "材质", "material", "尺寸", "dimension"}
}

func (t *turn) specsReply(item map[string]any) string {
	if said, ok := t.typedSpec(item); ok {
		return said
	}
	return t.attributeReply(item)
}

// typedSpec states the typed fact of the lookup the viewer names by its
// label ("功率", "pearl size"), if any.
func (t *turn) typedSpec(item map[string]any) (string, bool) {
	lower := strings.ToLower(t.text)
	specs, _ := item["specs"].([]any)
	for _, sp := range specs {
		m, _ := sp.(map[string]any)
		label, labelZH, key := str(m, "label"), str(m, "label_zh"), str(m, "key")
		names := []string{strings.ToLower(label), labelZH}
		if label == "" && labelZH == "" {
			names = []string{strings.ReplaceAll(strings.ToLower(key), "_", " ")}
		}
		if !containsAny(lower, names) {
			continue
		}
		if label == "" {
			label = key
		}
		if labelZH == "" {
			labelZH = label
		}
		switch v := m["value"].(type) {
		case bool:
			if v {
				return t.say(fmt.Sprintf("Yes, it is %s.", label), fmt.Sprintf("是的，%s。", labelZH)), true
			}
			return t.say(fmt.Sprintf("No, it is not %s.", label), fmt.Sprintf("不是的，这款不%s。", labelZH)), true
		case float64:
			n := strconv.FormatFloat(v, 'f', -1, 64)
			ue, uz := unitWords(str(m, "unit"))
			return t.say(fmt.Sprintf("%s: %s %s.", upperFirst(label), n, ue), fmt.Sprintf("%s是%s%s。", labelZH, n, uz)), true
		}
		value, valueZH := str(m, "value"), str(m, "value_zh")
		if valueZH == "" {
			valueZH = value
		}
		return t.say(fmt.Sprintf("%s: %s.", upperFirst(label), value), fmt.Sprintf("%s是%s。", labelZH, valueZH)), true
	}
	return "", false
}

// attributeReply states the attribute the viewer names, says a fact the
// item does not state is not stated, or describes the item.
func (t *turn) attributeReply(item map[string]any) string {
	lower := strings.ToLower(t.text)
	attrs, _ := item["attributes"].(map[string]any)
	if _, typed := item["specs"]; typed {
		attrs = nil // the same facts, already read by their labels
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		words := append([]string{strings.ToLower(k)}, specAliases()[strings.ToLower(k)]...)
		if containsAny(lower, words) {
			v := fmt.Sprint(attrs[k])
			return t.say(fmt.Sprintf("The %s is %s.", k, v), fmt.Sprintf("%s的%s是%s。", str(item, "name"), words[len(words)-1], v))
		}
	}
	if containsAny(lower, unstatedFacts()) || t.probe {
		return t.say("The listing doesn't say; I'll check and get back to you.", "这个商家没有标注，我确认一下再回复您。")
	}
	if d := str(item, "description"); d != "" {
		d = strings.TrimRight(d, ".。")
		if utf8.RuneCountInString(d) > 90 {
			d = string([]rune(d)[:90])
		}
		return t.say(fmt.Sprintf("%s: %s.", t.name(item), d), fmt.Sprintf("%s：%s。", str(item, "name"), d))
	}
	return t.say("I can't find that detail, so I won't guess.", "这个信息我这边查不到，不乱说哦。")
}

// allergenReply says whether the item contains the allergen the viewer
// names, from the allergens the lookup states.
func (t *turn) allergenReply(item map[string]any) string {
	lower := strings.ToLower(t.text)
	asked, word, wordZH := "", "", ""
	for _, code := range []string{"peanut", "tree_nut", "milk", "egg", "soy", "wheat", "fish", "shellfish", "sesame"} {
		en, zh := allergenWords(code)
		if containsAny(lower, append(slices.Clone(en), zh...)) {
			asked, word, wordZH = code, en[0], zh[0]
			break
		}
	}
	list, isList := item["allergens"].([]any)
	switch {
	case !isList && str(item, "allergens") == "none" && asked != "":
		return t.say(fmt.Sprintf("It states no allergens, so it does not contain %s.", word), fmt.Sprintf("这款标注没有过敏原，不含%s。", wordZH))
	case !isList && str(item, "allergens") == "none":
		return t.say("It states no allergens.", "这款标注没有过敏原。")
	case !isList:
		return t.say("Its allergen information is not stated; I'll check for you.", "这款没有标注过敏原信息，我帮您确认一下。")
	case asked == "":
		var names []string
		for _, a := range list {
			en, zh := allergenWords(fmt.Sprint(a))
			names = append(names, t.say(en[0], zh[0]))
		}
		return t.say("It contains "+strings.Join(names, ", ")+".", "这款含有"+strings.Join(names, "、")+"。")
	case slices.ContainsFunc(list, func(a any) bool { return a == asked }):
		return t.say(fmt.Sprintf("It contains %s, so please take care.", word), fmt.Sprintf("这款含有%s，介意的朋友请注意。", wordZH))
	}
	return t.say(fmt.Sprintf("It does not contain %s, going by its allergen list.", word), fmt.Sprintf("按标注的过敏原，这款不含%s。", wordZH))
}

// keepsReply says how long the item keeps, from the lookup.
func (t *turn) keepsReply(item map[string]any) string {
	if d, err := catalog.ParseDate(str(item, "best_before")); err == nil {
		return t.say(fmt.Sprintf("It is best before %s.", enDate(d)), fmt.Sprintf("这批保质期到%s。", zhDate(d)))
	}
	if days := str(item, "shelf_life_days"); days != "" {
		return t.say("It keeps for "+days+" days.", "保质期"+days+"天。")
	}
	return t.say("Its shelf life is not stated; I'll check for you.", "保质期商家没有标注，我帮您确认一下。")
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if w != "" && strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
