package liveroom

import (
	"fmt"

	"github.com/livehat/livehat/harness/hsa"
)

// Narration types: turns the host speaks on its own, from the strategy.
const (
	// QNarrateFeatured introduces the featured item with its live price.
	QNarrateFeatured QuestionType = "narrate_featured"
	// QNarrateCoupon announces the featured item's coupon: amount and the
	// spend it needs, never a coupon that does not exist.
	QNarrateCoupon QuestionType = "narrate_coupon"
	// QNarrateStock adds urgency only when stock is really low, and says
	// there is plenty when it is not.
	QNarrateStock QuestionType = "narrate_stock"
)

// lowStock is the total stock under which urgency is honest.
const lowStock = 20

// Narration builds a strategy turn about the featured item, with its gold:
// the instruction the strategy gives the host and what the spoken line
// must and must not say.
func (r *Room) Narration(t QuestionType, l Lang) (Question, error) {
	it, _ := r.Item(r.Featured)
	zh := l == LangZH
	say := func(en, zhText string) string {
		if zh {
			return zhText
		}
		return en
	}
	q := Question{Type: t, Lang: l, Viewer: "host"}
	lookup := lookup(it.ID)
	switch t {
	case QNarrateFeatured:
		q.Text = say("Introduce the featured item "+it.ID+" and its live price.", "介绍主推商品"+it.ID+"和直播间价格。")
		q.Gold = Gold{Skill: SkillPrice, Calls: []hsa.Call{loadSkill(SkillPrice), lookup},
			MustState: []Fact{money("live price of the featured item", it.Price()), phrase("the featured item's name", it.NameEN, it.NameZH)}}
	case QNarrateCoupon:
		q.Text = say("Many viewers ask about price: announce the coupon of the featured item "+it.ID+".", "很多观众在问价格：播报主推商品"+it.ID+"的优惠券。")
		// The strategy skill plans the chain; a reply skill must still be
		// loaded before the host speaks.
		q.Gold = Gold{Skill: SkillPrice, Calls: []hsa.Call{loadSkill(SkillCoupon), loadSkill(SkillPrice), lookup, {Name: ToolCouponCheck, Arguments: map[string]any{"item_id": it.ID}}}}
		if c, ok := r.Coupon(it.ID); ok {
			q.Gold.MustState = []Fact{money("coupon amount", c.Amount), money("minimum spend", c.MinSpend)}
			q.Gold.Money = []int64{c.Amount, c.MinSpend, max(0, c.MinSpend-c.Amount)}
		} else {
			q.Gold.MustState = []Fact{phrase("no coupon", "no coupon", "没有优惠券", "暂无优惠券", "没有券")}
		}
	case QNarrateStock:
		q.Text = say("Remind viewers of the stock of the featured item "+it.ID+".", "提醒观众主推商品"+it.ID+"的库存情况。")
		q.Gold = Gold{Skill: SkillFacts, Calls: []hsa.Call{loadSkill(SkillFacts), lookup, {Name: ToolCheckStock, Arguments: map[string]any{"item_id": it.ID}}}}
		urgent := phrase("urgency", "limited", "almost gone", "only a few", "库存紧张", "仅剩", "快抢")
		switch {
		case it.TotalStock() == 0:
			// Nothing left is no reason to hurry: it is sold out.
			q.Gold.MustState = []Fact{soldOutFact()}
			q.Gold.MustNotState = []Fact{urgent, availableClaim()}
		case it.TotalStock() < lowStock:
			q.Gold.MustState = []Fact{urgent}
		default:
			q.Gold.MustState = []Fact{phrase("plenty in stock", "plenty", "in stock", "库存充足", "有货")}
			q.Gold.MustNotState = []Fact{urgent}
		}
	default:
		return Question{}, fmt.Errorf("liveroom: %q is not a narration type", t)
	}
	q.Gold.Money = append(q.Gold.Money, it.Price(), it.ListPrice)
	q.Gold.Money = append(q.Gold.Money, moneyOf(q.Gold.MustState)...)
	return q, nil
}

// narrationReply is the expert's line for a strategy turn.
func (r *Room) narrationReply(q Question, add func(en, zh string)) {
	it, _ := r.Item(r.Featured)
	switch q.Type {
	case QNarrateFeatured:
		add(fmt.Sprintf("Today's pick is %s, only %s yuan in the live room!", it.NameEN, Yuan(it.Price())),
			fmt.Sprintf("今天主推%s，直播间只要%s元！", it.NameZH, Yuan(it.Price())))
	case QNarrateCoupon:
		if c, ok := r.Coupon(it.ID); ok {
			add(fmt.Sprintf("Coupon time: %s yuan off orders from %s yuan!", Yuan(c.Amount), Yuan(c.MinSpend)),
				fmt.Sprintf("优惠券来啦：满%s元减%s元！", Yuan(c.MinSpend), Yuan(c.Amount)))
		} else {
			add("There is no coupon for it today, but the live price is already low.", "这款今天没有优惠券，直播间价格已经很实惠。")
		}
	case QNarrateStock:
		switch {
		case it.TotalStock() == 0:
			add("It is sold out right now; stay tuned for the next items!", "这款已经售罄了，大家看看其他宝贝哦。")
		case it.TotalStock() < lowStock:
			add("Stock is limited, only a few left!", "库存紧张，仅剩几件！")
		default:
			add("It is in stock, plenty for everyone.", "库存充足，大家放心拍。")
		}
	}
}
