// Command promotion is an example skill: when the model loads
// current_promotion, it gets the promotions running at this moment, the
// price each gives and the time left, computed from the stream's
// strategy and clock, rather than a text an operator must keep current.
package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/livehat/livehat/sdk"
)

// Text composes the skill's text for time now.
func Text(now time.Time, promos []sdk.Promotion, products map[string]sdk.Product) string {
	var running, upcoming []sdk.Promotion
	for _, p := range promos {
		switch {
		case p.Running(now):
			running = append(running, p)
		case now.Before(p.Starts):
			upcoming = append(upcoming, p)
		}
	}
	// A promotion without a stated end sorts last: it has no deadline.
	slices.SortFunc(running, func(a, b sdk.Promotion) int {
		switch {
		case a.Ends.IsZero() || b.Ends.IsZero():
			return compareBool(a.Ends.IsZero(), b.Ends.IsZero())
		}
		return a.Ends.Compare(b.Ends)
	})
	slices.SortFunc(upcoming, func(a, b sdk.Promotion) int { return a.Starts.Compare(b.Starts) })
	var b strings.Builder
	if len(running) == 0 {
		b.WriteString("目前没有进行中的促销，请只报日常价，不要承诺折扣。")
	} else {
		b.WriteString("正在进行的促销（报价请以此为准，按结束先后排列）：\n")
		for _, p := range running {
			b.WriteString("- 【" + p.Title + "】")
			for _, id := range p.Products {
				if prod, ok := products[id]; ok {
					b.WriteString(offer(p, prod))
				}
			}
			if p.Text != "" {
				b.WriteString(p.Text + "；")
			}
			if p.Ends.IsZero() {
				b.WriteString("结束时间未说明，不要承诺截止时间。\n")
			} else {
				b.WriteString("还剩" + left(p.Ends.Sub(now)) + "结束。\n")
			}
		}
		if u := running[0]; !u.Ends.IsZero() && u.Ends.Sub(now) <= 15*time.Minute {
			b.WriteString("提醒：「" + u.Title + "」即将结束，可以提醒观众抓紧下单。\n")
		}
	}
	if len(upcoming) > 0 {
		n := upcoming[0]
		b.WriteString("下一场：「" + n.Title + "」将在" + left(n.Starts.Sub(now)) + "后开始。")
	}
	return strings.TrimSpace(b.String())
}

// offer states what a promotion gives on one of its products, by kind.
func offer(p sdk.Promotion, prod sdk.Product) string {
	pct := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + "%" }
	var s string
	switch p.Kind {
	case sdk.PromoPrice:
		s = fmt.Sprintf("%s 活动价%s（日常价%s）", prod.Name, yuan(p.Price), yuan(prod.Price))
	case sdk.PromoPercent:
		s = fmt.Sprintf("%s 立减%s", prod.Name, pct(p.Percent))
		if p.MinSpend <= prod.Price {
			s += "，到手" + yuan(prod.Price*(1-p.Percent/100))
		}
	case sdk.PromoMultiBuy:
		switch {
		case p.Price > 0:
			s = fmt.Sprintf("%s %d件共%s", prod.Name, p.Quantity, yuan(p.Price))
		case p.Percent > 0:
			s = fmt.Sprintf("%s 买%d件每件立减%s", prod.Name, p.Quantity, pct(p.Percent))
		default:
			s = fmt.Sprintf("%s 买%d件第%d件立减%s", prod.Name, p.Quantity, p.Quantity, pct(p.NthPercent))
		}
	case sdk.PromoBundle:
		s = fmt.Sprintf("%s 组合价%s", prod.Name, yuan(p.Price))
	case sdk.PromoGift:
		s = fmt.Sprintf("%s 送%s", prod.Name, p.Gift)
	default:
		s = prod.Name
	}
	if p.MinSpend > 0 {
		s += fmt.Sprintf("（订单满%s）", yuan(p.MinSpend))
	}
	return s + "；"
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func yuan(f float64) string {
	return "¥" + strconv.FormatFloat(float64(int64(f*100+0.5))/100, 'f', -1, 64)
}

// left says a duration the way a host would: "1小时20分钟", "8分钟", "2天".
func left(d time.Duration) string {
	d = d.Round(time.Minute)
	switch {
	case d >= 48*time.Hour:
		return strconv.Itoa(int(d/(24*time.Hour))) + "天"
	case d >= time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return strconv.Itoa(h) + "小时"
		}
		return strconv.Itoa(h) + "小时" + strconv.Itoa(m) + "分钟"
	case d >= time.Minute:
		return strconv.Itoa(int(d/time.Minute)) + "分钟"
	}
	return "不到1分钟"
}

// main is empty: a plugin is a WASI reactor whose exports the host calls.
func main() {}
