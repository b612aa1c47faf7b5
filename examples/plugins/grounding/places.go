package main

import (
	"regexp"
	"slices"
	"strings"
)

// placeNames are China's provinces and the cities merchants ship from,
// with the English names a reply may give them. A catalog writes where an
// item ships from in Chinese ("浙江义乌"); an English reply saying "Yiwu,
// Zhejiang" is backed when each of its words is a part of that place.
var placeNames = map[string][]string{
	"北京": {"beijing"}, "天津": {"tianjin"}, "上海": {"shanghai"}, "重庆": {"chongqing"}, "河北": {"hebei"}, "山西": {"shanxi"},
	"辽宁": {"liaoning"}, "吉林": {"jilin"}, "黑龙江": {"heilongjiang"}, "江苏": {"jiangsu"}, "浙江": {"zhejiang"}, "安徽": {"anhui"},
	"福建": {"fujian"}, "江西": {"jiangxi"}, "山东": {"shandong"}, "河南": {"henan"}, "湖北": {"hubei"}, "湖南": {"hunan"},
	"广东": {"guangdong"}, "海南": {"hainan"}, "四川": {"sichuan"}, "贵州": {"guizhou"}, "云南": {"yunnan"}, "陕西": {"shaanxi"},
	"甘肃": {"gansu"}, "青海": {"qinghai"}, "台湾": {"taiwan"}, "内蒙古": {"inner", "mongolia"}, "广西": {"guangxi"},
	"西藏": {"tibet", "xizang"}, "宁夏": {"ningxia"}, "新疆": {"xinjiang"}, "香港": {"hong", "kong"}, "澳门": {"macau", "macao"},
	"义乌": {"yiwu"}, "佛山": {"foshan"}, "泉州": {"quanzhou"}, "苏州": {"suzhou"}, "青岛": {"qingdao"}, "保定": {"baoding"},
	"成都": {"chengdu"}, "深圳": {"shenzhen"}, "杭州": {"hangzhou"}, "永康": {"yongkang"}, "芜湖": {"wuhu"}, "广州": {"guangzhou"},
	"东莞": {"dongguan"}, "宁波": {"ningbo"}, "温州": {"wenzhou"}, "金华": {"jinhua"}, "嘉兴": {"jiaxing"}, "湖州": {"huzhou"},
	"绍兴": {"shaoxing"}, "台州": {"taizhou"}, "泰州": {"taizhou"}, "南京": {"nanjing"}, "无锡": {"wuxi"}, "常州": {"changzhou"},
	"南通": {"nantong"}, "厦门": {"xiamen"}, "福州": {"fuzhou"}, "莆田": {"putian"}, "晋江": {"jinjiang"}, "济南": {"jinan"},
	"临沂": {"linyi"}, "潍坊": {"weifang"}, "烟台": {"yantai"}, "武汉": {"wuhan"}, "长沙": {"changsha"}, "郑州": {"zhengzhou"},
	"西安": {"xian", "xi'an"}, "合肥": {"hefei"}, "南昌": {"nanchang"}, "昆明": {"kunming"}, "贵阳": {"guiyang"}, "南宁": {"nanning"},
	"石家庄": {"shijiazhuang"}, "沈阳": {"shenyang"}, "大连": {"dalian"}, "哈尔滨": {"harbin"}, "长春": {"changchun"},
	"太原": {"taiyuan"}, "兰州": {"lanzhou"}, "乌鲁木齐": {"urumqi"}, "呼和浩特": {"hohhot"}, "汕头": {"shantou"},
	"中山": {"zhongshan"}, "珠海": {"zhuhai"}, "惠州": {"huizhou"}, "揭阳": {"jieyang"}, "潮州": {"chaozhou"}, "江门": {"jiangmen"},
	"湛江": {"zhanjiang"}, "德州": {"dezhou"}, "廊坊": {"langfang"}, "唐山": {"tangshan"}, "徐州": {"xuzhou"}, "扬州": {"yangzhou"},
	"镇江": {"zhenjiang"}, "盐城": {"yancheng"}, "连云港": {"lianyungang"}, "漳州": {"zhangzhou"}, "龙岩": {"longyan"},
	"赣州": {"ganzhou"}, "洛阳": {"luoyang"}, "宜昌": {"yichang"}, "桂林": {"guilin"}, "三亚": {"sanya"}, "海口": {"haikou"},
	"拉萨": {"lhasa"}, "西宁": {"xining"}, "银川": {"yinchuan"}, "丽水": {"lishui"}, "衢州": {"quzhou"}, "舟山": {"zhoushan"},
}

// placeFiller are words around a place that name none ("Zhejiang
// province", "Yiwu city, China").
var placeFiller = []string{"province", "city", "china", "county", "district", "warehouse", "and", "in"}

// shipFromRE is an English ship-from claim and the words after it.
var shipFromRE = regexp.MustCompile(`(?i)\b(?:ships?|shipped|shipping|dispatch(?:ed|es)?|sent)(?:\s+out)?\s+from\s+`)

// shipFromCues mark a Chinese clause that says where an item ships from.
var shipFromCues = []string{"发货", "发出", "寄出", "发的货"}

// shipFrom holds the places a reply says an item ships from to the
// results' ship_from: in English each capitalized word after "ships
// from" must be a part of a stated place (or the place as written), in
// Chinese a province or city named in a clause that ships must be.
func (c *checker) shipFrom() {
	english := strings.Contains(c.lower, "from")
	if !english && !containsAny(c.text, shipFromCues) {
		return // most replies say nothing of where an item ships from
	}
	var stated []string
	for _, f := range c.tf.inPlay() {
		for _, a := range f.attrs {
			if a[0] == shipFromKey {
				stated = append(stated, a[1])
			}
		}
	}
	why := func() string {
		if len(stated) == 0 {
			return "no tool result says where it ships from"
		}
		return "the results say it ships from " + strings.Join(stated, ", ")
	}
	var claims [][]int
	if english {
		claims = shipFromRE.FindAllStringIndex(c.text, -1)
	}
	for _, m := range claims {
		start, end := m[1], m[1]
		for _, w := range placeWords(c.text[m[1]:]) {
			if !slices.Contains(placeFiller, asciiLower(w.word)) && !placeBacked(asciiLower(w.word), stated) {
				c.flag(KindFact, m[1]+w.start, m[1]+w.end, "%s", why())
				break
			}
			end = m[1] + w.end
		}
		claim(c.used, start, end)
	}
	for zh := range placeNames {
		for start, end := range occurrences(c.text, zh) {
			if c.used[start] || !c.shipsInClause(start) || slices.ContainsFunc(stated, func(s string) bool { return strings.Contains(s, zh) }) {
				continue
			}
			c.flag(KindFact, start, end, "%s", why())
		}
	}
}

// shipsInClause reports whether the clause at pos says where something
// ships from, in either language.
func (c *checker) shipsInClause(pos int) bool {
	a, b := clause(c.text, pos)
	return containsAny(c.text[a:b], shipFromCues) || shipFromRE.MatchString(c.text[a:b])
}

// placeWord is a word of a place name: its offsets and text.
type placeWord struct {
	start, end int
	word       string
}

// placeWords returns the words a place name begins text with ("Qingdao,
// Shandong"): capitalized, or fillers between them; it stops at the first
// other word.
func placeWords(text string) []placeWord {
	var out []placeWord
	for i := 0; ; {
		j := i
		for j < len(text) && (text[j] == ' ' || text[j] == ',') {
			j++
		}
		k := j
		for k < len(text) && (isASCIILetter(text[k]) || text[k] == '\'' || text[k] == '-') {
			k++
		}
		w := text[j:k]
		if w == "" || (w[0] < 'A' || w[0] > 'Z') && !slices.Contains(placeFiller, asciiLower(w)) {
			return out
		}
		out = append(out, placeWord{j, k, w})
		i = k
	}
}

// placeBacked reports whether a lower-case English word names a part of
// one of the stated places.
func placeBacked(word string, stated []string) bool {
	for _, s := range stated {
		if strings.Contains(asciiLower(s), word) {
			return true // the place as written, in Latin letters
		}
		for zh, en := range placeNames {
			if strings.Contains(s, zh) && slices.Contains(en, word) {
				return true
			}
		}
	}
	return false
}
