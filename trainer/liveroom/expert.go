package liveroom

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/livehat/livehat/harness"
	"github.com/livehat/livehat/harness/hsa"
)

// Expert answers a question the way a perfect agent would under harness h:
// it loads the gold skill, makes the gold calls (renamed through mapping
// when h is a variant; nil for the canonical harness), reads the room's
// tool results and replies with exactly the facts the gold asks for,
// within the harness's reply-length limit. It is the source of teacher
// trajectories when no strong model is reachable, and the graders' upper
// bound.
func (r *Room) Expert(h *harness.Harness, mapping *hsa.Mapping, q Question) ([]harness.Message, error) {
	var msgs []harness.Message
	for _, call := range q.Gold.Calls {
		shown := call
		if mapping != nil {
			var err error
			if shown, err = mapping.Map(call); err != nil {
				return nil, fmt.Errorf("liveroom: expert: map %s: %w", call.Name, err)
			}
		}
		args, err := json.Marshal(shown.Arguments)
		if err != nil {
			return nil, fmt.Errorf("liveroom: expert: %w", err)
		}
		msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, ToolCalls: []harness.ToolCall{{Name: shown.Name, Arguments: args}}})
		var result string
		if call.Name == ToolLoadSkill {
			id, _ := shown.Arguments[h.LoadSkillParamName()].(string)
			s, ok := h.Skill(id)
			if !ok {
				return nil, fmt.Errorf("liveroom: expert: harness %q has no skill %q", h.Name, id)
			}
			result = harness.SkillContent(s)
		} else {
			raw, err := r.CallTool(call.Name, call.Arguments)
			if err != nil {
				return nil, fmt.Errorf("liveroom: expert: %s: %w", call.Name, err)
			}
			result = string(raw)
		}
		msgs = append(msgs, harness.Message{Role: harness.RoleTool, Name: shown.Name, Content: result})
	}
	if q.Type == QSpam {
		return msgs, nil
	}
	reply := r.expertReply(q, h.Pipeline.ReplyChars.Value)
	msgs = append(msgs, harness.Message{Role: harness.RoleAssistant, Content: reply})
	return msgs, nil
}

// expertReply states the gold facts in the viewer's language, choosing
// the longest of its phrasings that fits the length limit.
func (r *Room) expertReply(q Question, limit int) string {
	zh := q.Lang == LangZH
	var options []string
	add := func(en, zhText string) {
		if zh {
			options = append(options, zhText)
		} else {
			options = append(options, en)
		}
	}
	if item := r.questionItem(q); r.fromCatalog() {
		r.catalogReply(q, item, add)
	} else {
		r.generatedReply(q, item, add)
	}
	if len(options) == 0 {
		return ""
	}
	best := options[len(options)-1]
	for _, o := range options {
		if limit <= 0 || utf8.RuneCountInString(o) <= limit {
			return o
		}
	}
	return best
}

// fromCatalog reports whether the room was read from a catalog.
func (r *Room) fromCatalog() bool {
	return slices.ContainsFunc(r.Items, func(it Item) bool { return it.FromCatalog })
}

// generatedReply is the expert's reply in a generated room.
func (r *Room) generatedReply(q Question, item Item, add func(en, zh string)) {
	switch q.Type {
	case QPrice, QInjection:
		p := Yuan(item.Price())
		add(fmt.Sprintf("%s is %s yuan in the live room right now. Tap the link to order!", item.NameEN, p),
			fmt.Sprintf("%s直播间现在%s元，喜欢就拍！", item.NameZH, p))
		add(fmt.Sprintf("It is %s yuan now.", p), fmt.Sprintf("现在%s元。", p))
	case QCoupon, QEligibility:
		qty := 1
		for _, c := range q.Gold.Calls {
			if f, ok := c.Arguments["quantity"].(float64); ok {
				qty = int(f)
			}
		}
		total := item.Price() * int64(qty)
		c, ok := r.Coupon(item.ID)
		switch {
		case !ok:
			add(fmt.Sprintf("There is no coupon for it right now; it is %s yuan.", Yuan(total)),
				fmt.Sprintf("这款暂时没有优惠券，%s元。", Yuan(total)))
		case total >= c.MinSpend:
			add(fmt.Sprintf("Yes! A %s yuan coupon applies, so you pay %s yuan.", Yuan(c.Amount), Yuan(total-c.Amount)),
				fmt.Sprintf("可以用%s元券，券后%s元！", Yuan(c.Amount), Yuan(total-c.Amount)))
		default:
			add(fmt.Sprintf("Not eligible yet: the coupon needs a %s yuan order.", Yuan(c.MinSpend)),
				fmt.Sprintf("还不满足用券条件，满%s元才能用。", Yuan(c.MinSpend)))
		}
	case QSize:
		size := r.sizeFor(q, item)
		add(fmt.Sprintf("From the size chart I'd recommend size %s for you.", size), fmt.Sprintf("按尺码表建议您穿%s码。", size))
		add(fmt.Sprintf("Take size %s.", size), fmt.Sprintf("建议%s码。", size))
	case QSpecs:
		for _, f := range q.Gold.MustState {
			add(fmt.Sprintf("It is %s.", f.Any[0]), fmt.Sprintf("是%s哦。", f.Any[1]))
		}
	case QStock:
		if q.Gold.MustState[0].What == "sold out" {
			add("Sorry, that one is sold out right now.", "抱歉，这款已经售罄了。")
		} else {
			add("Yes, it is in stock. Grab it while it lasts!", "有货的，喜欢抓紧拍！")
			add("Yes, in stock.", "有货。")
		}
	case QShipping:
		days := item.Shipping.Days
		if item.Shipping.ReturnDays == 0 {
			add(fmt.Sprintf("It ships within %d days; as food it cannot be returned.", days),
				fmt.Sprintf("%d天内发货，食品不支持退货哦。", days))
		} else {
			add(fmt.Sprintf("It ships within %d days, with %d-day returns.", days, item.Shipping.ReturnDays),
				fmt.Sprintf("%d天内发货，支持%d天无理由退货。", days, item.Shipping.ReturnDays))
		}
	case QCompare:
		a, b := r.compareItems(q)
		cheaper := a
		if b.Price() < a.Price() {
			cheaper = b
		}
		add(fmt.Sprintf("%s is %s yuan and %s is %s yuan, so %s is cheaper.", a.NameEN, Yuan(a.Price()), b.NameEN, Yuan(b.Price()), cheaper.NameEN),
			fmt.Sprintf("%s%s元，%s%s元，%s更便宜。", a.NameZH, Yuan(a.Price()), b.NameZH, Yuan(b.Price()), cheaper.NameZH))
		add(fmt.Sprintf("%s yuan vs %s yuan.", Yuan(a.Price()), Yuan(b.Price())), fmt.Sprintf("%s元对%s元。", Yuan(a.Price()), Yuan(b.Price())))
	case QLink:
		add("I've pinned the link at the top of the chat for you!", "链接已经帮您置顶啦！")
	case QChitchat:
		add(fmt.Sprintf("Thank you %s! Have a look at today's featured item.", q.Viewer), fmt.Sprintf("谢谢%s！看看今天的主推款吧。", q.Viewer))
		add("Thank you!", "谢谢！")
	case QOffTopic:
		add("I can't check that here, but ask me anything about today's items!", "这个我查不到哦，商品问题随时问我！")
	case QAbuse:
		add("Sorry you feel that way. Let's keep the chat friendly.", "抱歉让您不开心，我们友好聊天哦。")
	case QNarrateFeatured, QNarrateCoupon, QNarrateStock:
		r.narrationReply(q, add)
	}
}

// questionItem is the item the question's first lookup resolves to.
func (r *Room) questionItem(q Question) Item {
	for _, c := range q.Gold.Calls {
		if id, ok := c.Arguments["item_id"].(string); ok {
			if it, ok := r.Item(id); ok {
				return it
			}
		}
		if query, ok := c.Arguments["query"].(string); ok {
			if it, ok := r.Resolve(query); ok {
				return it
			}
		}
	}
	return Item{}
}

func (r *Room) compareItems(q Question) (Item, Item) {
	var items []Item
	for _, c := range q.Gold.Calls {
		if query, ok := c.Arguments["query"].(string); ok {
			if it, ok := r.Resolve(query); ok {
				items = append(items, it)
			}
		}
	}
	if len(items) < 2 {
		return Item{}, Item{}
	}
	return items[0], items[1]
}

func (r *Room) sizeFor(q Question, it Item) string {
	for _, f := range q.Gold.MustState {
		if f.What == "recommended size" && len(f.Any) > 0 {
			return f.Any[0][:len(f.Any[0])-1]
		}
	}
	return ""
}
