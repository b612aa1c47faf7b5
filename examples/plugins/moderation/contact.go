package main

import (
	"regexp"
	"strings"
	"unicode"
)

// Contact solicitation is the live room's most common spam: viewers (or
// bots) pulling the audience to a private channel. Spammers dodge filters
// with full-width letters, spaces, dots and dashes between characters,
// homophones of 微信 and Chinese digits, so the patterns run on a compact
// form of the message (see compact) as well as on the text.
var (
	// urlRE finds links and bare domains, also written with a full-width
	// dot, 点 or "dot" before the top-level domain.
	urlRE = regexp.MustCompile(`(?i)https?\s*[:：]\s*/\s*/|www\s*[.。]|t\.me/|[a-z0-9-]\s*(?:[.。]|点|\bdot\b)\s*(?:com|cn|net|org|top|xyz|cc|io|me|vip|shop|link|club|site|info)(?:[^a-z]|$)`)
	// solicitRE runs on the compact form: phrases that ask viewers to a
	// private channel are spam without an id ("加V看福利", "私聊").
	solicitRE = regexp.MustCompile(`私聊|私信我|私我|私戳|加(?:v(?:[^i]|$)|微|威|薇|徽|qq|扣|企鹅|我|好友|群)|(?:微信|威信|薇信|徽信|v信|vx|wx|qq|扣扣|企鹅)号|(?:进|入)群`)
	// hanChannelRE runs on the compact form: a channel named in Chinese
	// followed by an id ("微 信：abc123").
	hanChannelRE = regexp.MustCompile(`(?:微信|威信|薇信|徽信|v信|扣扣|企鹅|电话|手机号?)[:=]?([0-9a-z_-]{5,})`)
	// latinChannelRE runs on the width-folded text, where word boundaries
	// survive: "vx 123456", "Q Q: 88771234", "wechat: lily_2024".
	latinChannelRE = regexp.MustCompile(`(?:^|[^a-z0-9])(?:v\s*x|w\s*x|q\s*q|weixin|wechat)[\s:=：]*((?:[0-9a-z_-][\s.·-]?){5,})|\bdm\s*me\b|whatsapp|telegram`)
	// phoneRE is a mainland mobile number once separators are gone.
	phoneRE = regexp.MustCompile(`(?:^|[^0-9])1[3-9][0-9]{9}(?:[^0-9]|$)`)
)

// cnDigits maps Chinese (and circled) digits to ASCII, for numbers spelled
// out to slip past a digit filter ("一三八…", "幺三八…").
var cnDigits = map[rune]rune{
	'零': '0', '〇': '0', '一': '1', '幺': '1', '壹': '1', '二': '2', '两': '2', '贰': '2', '三': '3', '叁': '3',
	'四': '4', '肆': '4', '五': '5', '伍': '5', '六': '6', '陆': '6', '七': '7', '柒': '7', '八': '8', '捌': '8',
	'九': '9', '玖': '9', '①': '1', '②': '2', '③': '3', '④': '4', '⑤': '5', '⑥': '6', '⑦': '7', '⑧': '8', '⑨': '9',
}

// compact folds width and case and drops everything but letters and
// digits, so "V Ｘ：１２３-４５６" and "微 信" read as "vx123456" and "微信".
// With digits, Chinese digits become ASCII too.
func compact(text string, digits bool) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		if r >= 0xFF01 && r <= 0xFF5E { // full-width ASCII
			r = unicode.ToLower(r - 0xFEE0)
		}
		if d, ok := cnDigits[r]; ok && digits {
			r = d
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// widthFolded folds full-width ASCII to ASCII and lowers case, keeping
// separators (for patterns that need word boundaries).
func widthFolded(text string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0
		}
		if r == '\u3000' {
			r = ' '
		}
		return unicode.ToLower(r)
	}, text)
}

// Contact names the kind of contact solicitation in text ("link",
// "contact details", "private chat"), or "" when there is none.
func Contact(text string) string {
	if urlRE.MatchString(widthFolded(text)) {
		return "link"
	}
	letters := compact(text, false)
	for _, m := range [][]string{hanChannelRE.FindStringSubmatch(letters), latinChannelRE.FindStringSubmatch(widthFolded(text))} {
		if m != nil && (m[1] == "" || hasDigit(m[1])) {
			return "contact details"
		}
	}
	if phoneRE.MatchString(compact(text, true)) {
		return "contact details"
	}
	if solicitRE.MatchString(letters) {
		return "private chat"
	}
	return ""
}

func hasDigit(s string) bool {
	return strings.ContainsAny(s, "0123456789")
}
