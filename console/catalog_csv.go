package console

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/livehat/livehat/plugins"
)

// A catalog CSV has one product per row under a header row. Columns (the
// header names, in any order and case; the Chinese names work too):
//
//	id (商品ID)            required; unique
//	name (商品名称)         required
//	price (价格)            required; a number, "¥" allowed, at most 2 decimals
//	list_price (原价)       optional; not below price
//	stock (库存)            required unless variants are given (then their sum)
//	aliases (别名)          "精华|serum"
//	category (类目)
//	description (描述)
//	attributes (属性)       "volume=30ml|skin=all"
//	variants (规格)         "S:10|M:0|L:25" (name:stock)
//	size_chart (尺码表)     "M:155-168:45-60|L:165-178:58-75" (size:height cm:weight kg)
//	shipping_days (发货天数), shipping_fee (运费), return_days (退货天数): all three or none
//
// Rows are numbered as a spreadsheet shows them: the header is row 1.
// Commas separate fields; a file whose header has tabs or semicolons and
// no comma is read with that separator. Lists inside a cell use "|".

// catalogProblem is one thing wrong with an imported catalog: where
// (row, column) and what.
type catalogProblem struct {
	// Section is "file", "products", "coupons" or "promotions".
	Section string `json:"section"`
	// Row is the CSV line (the header is 1), or the 1-based position of
	// the entry in its JSON list; 0 when the problem is not about one row.
	Row     int    `json:"row,omitempty"`
	Column  string `json:"column,omitempty"`
	Message string `json:"message"`
}

func (p catalogProblem) String() string {
	var where []string
	if p.Row > 0 {
		where = append(where, "row "+strconv.Itoa(p.Row))
	}
	if p.Column != "" {
		where = append(where, "column "+p.Column)
	}
	if len(where) == 0 {
		return p.Message
	}
	return strings.Join(where, ", ") + ": " + p.Message
}

// maxCatalogProblems bounds the problems one import reports.
const maxCatalogProblems = 100

// maxCatalogProducts bounds the products of one catalog.
const maxCatalogProducts = 5000

// problemList collects problems up to maxCatalogProblems.
type problemList []catalogProblem

func (l *problemList) add(section string, row int, column, format string, args ...any) {
	if len(*l) < maxCatalogProblems {
		*l = append(*l, catalogProblem{Section: section, Row: row, Column: column, Message: fmt.Sprintf(format, args...)})
	}
}

func (l problemList) full() bool { return len(l) >= maxCatalogProblems }

// csvColumns are the canonical column names in export order.
func csvColumns() []string {
	return []string{"id", "name", "price", "list_price", "stock", "aliases", "category", "description", "attributes",
		"variants", "size_chart", "shipping_days", "shipping_fee", "return_days"}
}

// csvColumnAliases maps the Chinese header names to the canonical ones.
func csvColumnAliases() map[string]string {
	return map[string]string{
		"商品id": "id", "编号": "id", "商品编号": "id", "名称": "name", "商品名称": "name", "商品名": "name",
		"价格": "price", "直播价": "price", "原价": "list_price", "划线价": "list_price", "库存": "stock",
		"别名": "aliases", "类目": "category", "分类": "category", "描述": "description", "介绍": "description",
		"属性": "attributes", "规格": "variants", "尺码表": "size_chart", "发货天数": "shipping_days",
		"运费": "shipping_fee", "退货天数": "return_days",
	}
}

// parseCatalogCSV reads products from a catalog CSV. It returns every
// problem it finds (up to maxCatalogProblems); the products are usable only
// when there are none.
func parseCatalogCSV(data []byte) ([]plugins.Product, problemList) {
	var probs problemList
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalidUTF8(data)], []byte("\n"))
		probs.add("file", line, "", "the file is not UTF-8 text: save it as \"CSV UTF-8\"")
		return nil, probs
	}
	if len(bytes.TrimSpace(data)) == 0 {
		probs.add("file", 0, "", "the file is empty")
		return nil, probs
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = csvSeparator(data)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		probs.add("file", 1, "", "the header row cannot be read: %s", csvErrorText(err))
		return nil, probs
	}
	cols := map[string]int{}
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		if alias, ok := csvColumnAliases()[name]; ok {
			name = alias
		}
		switch {
		case name == "":
			probs.add("products", 1, fmt.Sprintf("#%d", i+1), "the header has an empty column name")
		case !containsName(csvColumns(), name):
			probs.add("products", 1, h, "unknown column %q (the columns are %s)", h, strings.Join(csvColumns(), ", "))
		default:
			if _, dup := cols[name]; dup {
				probs.add("products", 1, name, "column %q appears twice", name)
			}
			cols[name] = i
		}
	}
	for _, req := range []string{"id", "name", "price"} {
		if _, ok := cols[req]; !ok {
			probs.add("products", 1, req, "the header has no %q column", req)
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	var out []plugins.Product
	firstRow := map[string]int{}
	for !probs.full() {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			line := 0
			if errors.As(err, &pe) {
				line = pe.Line
			}
			probs.add("products", line, "", "%s", csvErrorText(err))
			break
		}
		line, _ := r.FieldPos(0)
		if len(rec) > len(header) {
			probs.add("products", line, "", "%d fields, but the header has %d columns", len(rec), len(header))
			continue
		}
		cell := func(col string) string {
			i, ok := cols[col]
			if !ok || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		if allEmpty(rec) {
			continue
		}
		if len(out) == maxCatalogProducts {
			probs.add("products", line, "", "more than %d products", maxCatalogProducts)
			break
		}
		p, rowProbs := productFromRow(cell)
		for _, rp := range rowProbs {
			probs.add("products", line, rp.column, "%s", rp.message)
		}
		if p.ID != "" {
			if first, dup := firstRow[p.ID]; dup {
				probs.add("products", line, "id", "duplicate id %q (first on row %d)", p.ID, first)
			} else {
				firstRow[p.ID] = line
			}
		}
		out = append(out, p)
	}
	if len(out) == 0 && len(probs) == 0 {
		probs.add("file", 0, "", "the file has a header but no product rows")
	}
	return out, probs
}

// csvSeparator picks the field separator from the header line.
func csvSeparator(data []byte) rune {
	head, _, _ := bytes.Cut(data, []byte("\n"))
	if bytes.ContainsRune(head, ',') {
		return ','
	}
	for _, sep := range []rune{'\t', ';'} {
		if bytes.ContainsRune(head, sep) {
			return sep
		}
	}
	return ','
}

func csvErrorText(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func allEmpty(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

func containsName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cellProblem is a problem of one cell of a row.
type cellProblem struct{ column, message string }

// productFromRow reads one product from a row's cells and checks it.
func productFromRow(cell func(string) string) (plugins.Product, []cellProblem) {
	var probs []cellProblem
	bad := func(col, format string, args ...any) {
		probs = append(probs, cellProblem{col, fmt.Sprintf(format, args...)})
	}
	p := plugins.Product{ID: cell("id"), Name: cell("name"), Category: cell("category"), Description: cell("description")}
	var err error
	if p.Price, err = parseMoney(cell("price"), true); err != nil {
		bad("price", "%v", err)
	}
	if p.ListPrice, err = parseMoney(cell("list_price"), false); err != nil {
		bad("list_price", "%v", err)
	}
	for _, a := range splitList(cell("aliases")) {
		p.Aliases = append(p.Aliases, a)
	}
	for _, kv := range splitList(cell("attributes")) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			bad("attributes", "%q is not key=value", kv)
			continue
		}
		if p.Attributes == nil {
			p.Attributes = map[string]string{}
		}
		p.Attributes[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	for _, vs := range splitList(cell("variants")) {
		name, stock, ok := strings.Cut(vs, ":")
		n, err := strconv.Atoi(strings.TrimSpace(stock))
		if !ok || err != nil {
			bad("variants", "%q is not name:stock", vs)
			continue
		}
		p.Variants = append(p.Variants, plugins.Variant{Name: strings.TrimSpace(name), Stock: n})
	}
	for _, row := range splitList(cell("size_chart")) {
		sr, err := parseSizeRow(row)
		if err != nil {
			bad("size_chart", "%v", err)
			continue
		}
		p.SizeChart = append(p.SizeChart, sr)
	}
	switch s := cell("stock"); {
	case s == "" && len(p.Variants) > 0:
		for _, v := range p.Variants {
			p.Stock += v.Stock
		}
	case s == "":
		bad("stock", "stock is required (or give variants with their stock)")
	default:
		n, err := strconv.Atoi(s)
		if err != nil {
			bad("stock", "%q is not a whole number", s)
		}
		p.Stock = n
	}
	days, fee, ret := cell("shipping_days"), cell("shipping_fee"), cell("return_days")
	if days != "" || fee != "" || ret != "" {
		sh := &plugins.Shipping{}
		if sh.Days, err = strconv.Atoi(days); err != nil {
			bad("shipping_days", "%q is not a whole number of days", days)
		}
		if sh.Fee, err = parseMoney(fee, true); err != nil {
			bad("shipping_fee", "%v", err)
		}
		if sh.ReturnDays, err = strconv.Atoi(ret); err != nil {
			bad("return_days", "%q is not a whole number of days", ret)
		}
		p.Shipping = sh
	}
	if len(probs) == 0 {
		probs = append(probs, checkProduct(p)...)
	}
	return p, probs
}

// splitList splits a cell's "|"-separated list, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, "|") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// parseMoney reads an amount: digits with at most two decimals, an
// optional currency sign and thousands separators.
func parseMoney(s string, required bool) (float64, error) {
	t := strings.TrimSpace(s)
	for _, sign := range []string{"¥", "￥", "$", "CNY", "RMB"} {
		t = strings.TrimSpace(strings.TrimPrefix(t, sign))
	}
	t = strings.TrimSpace(strings.TrimSuffix(t, "元"))
	t = strings.ReplaceAll(t, ",", "")
	if t == "" {
		if required {
			return 0, errors.New("is required")
		}
		return 0, nil
	}
	for _, r := range t {
		if !unicode.IsDigit(r) && r != '.' && r != '-' {
			return 0, fmt.Errorf("%q is not a number", s)
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if _, frac, ok := strings.Cut(t, "."); ok && len(frac) > 2 {
		return 0, fmt.Errorf("%q has more than two decimals", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return v, nil
}

// parseSizeRow reads "M:155-168:45-60".
func parseSizeRow(s string) (plugins.SizeRow, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return plugins.SizeRow{}, fmt.Errorf("%q is not size:minHeight-maxHeight:minWeight-maxWeight", s)
	}
	rng := func(v string) (int, int, error) {
		a, b, ok := strings.Cut(strings.TrimSpace(v), "-")
		lo, err1 := strconv.Atoi(strings.TrimSpace(a))
		hi, err2 := strconv.Atoi(strings.TrimSpace(b))
		if !ok || err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("%q in %q is not a range like 155-168", v, s)
		}
		return lo, hi, nil
	}
	row := plugins.SizeRow{Size: strings.TrimSpace(parts[0])}
	var err error
	if row.MinHeight, row.MaxHeight, err = rng(parts[1]); err != nil {
		return row, err
	}
	if row.MinWeight, row.MaxWeight, err = rng(parts[2]); err != nil {
		return row, err
	}
	return row, nil
}

// checkProduct checks one product's values (the shape is already right).
func checkProduct(p plugins.Product) []cellProblem {
	var probs []cellProblem
	bad := func(col, format string, args ...any) {
		probs = append(probs, cellProblem{col, fmt.Sprintf(format, args...)})
	}
	switch {
	case p.ID == "":
		bad("id", "missing id")
	case utf8.RuneCountInString(p.ID) > 64:
		bad("id", "id longer than 64 characters")
	case strings.IndexFunc(p.ID, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		bad("id", "id %q contains spaces or control characters", p.ID)
	}
	if strings.TrimSpace(p.Name) == "" {
		bad("name", "missing name")
	} else if utf8.RuneCountInString(p.Name) > 200 {
		bad("name", "name longer than 200 characters")
	}
	money := func(col string, v float64) {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			bad(col, "not a number")
		case v < 0:
			bad(col, "negative %s %v", col, v)
		case v > 1e8:
			bad(col, "%v is more than 100,000,000", v)
		}
	}
	money("price", p.Price)
	money("list_price", p.ListPrice)
	if p.ListPrice > 0 && p.ListPrice < p.Price {
		bad("list_price", "list price %v is below the price %v", p.ListPrice, p.Price)
	}
	if p.Stock < 0 {
		bad("stock", "negative stock %d", p.Stock)
	}
	for _, a := range p.Aliases {
		if strings.TrimSpace(a) == "" {
			bad("aliases", "an alias is empty")
		}
	}
	for k := range p.Attributes {
		if strings.TrimSpace(k) == "" {
			bad("attributes", "an attribute has no name")
		}
	}
	if len(p.Variants) > 0 {
		sum := 0
		seen := map[string]bool{}
		for _, v := range p.Variants {
			switch {
			case strings.TrimSpace(v.Name) == "":
				bad("variants", "a variant has no name")
			case seen[strings.ToLower(v.Name)]:
				bad("variants", "variant %q appears twice", v.Name)
			case v.Stock < 0:
				bad("variants", "variant %q has negative stock %d", v.Name, v.Stock)
			}
			seen[strings.ToLower(v.Name)] = true
			sum += v.Stock
		}
		if p.Stock != sum {
			bad("stock", "stock %d is not the sum of the variants' stock %d", p.Stock, sum)
		}
	}
	for _, r := range p.SizeChart {
		switch {
		case r.Size == "":
			bad("size_chart", "a size-chart row has no size")
		case r.MinHeight < 0 || r.MinHeight > r.MaxHeight || r.MaxHeight > 250:
			bad("size_chart", "size %s: height range %d-%d cm is not plausible", r.Size, r.MinHeight, r.MaxHeight)
		case r.MinWeight < 0 || r.MinWeight > r.MaxWeight || r.MaxWeight > 300:
			bad("size_chart", "size %s: weight range %d-%d kg is not plausible", r.Size, r.MinWeight, r.MaxWeight)
		}
	}
	if sh := p.Shipping; sh != nil {
		if sh.Days < 0 {
			bad("shipping_days", "negative shipping days %d", sh.Days)
		}
		money("shipping_fee", sh.Fee)
		if sh.ReturnDays < 0 {
			bad("return_days", "negative return days %d", sh.ReturnDays)
		}
	}
	return probs
}

// writeCatalogCSV writes products in the import format, so an export can
// be edited in a spreadsheet and imported again.
func writeCatalogCSV(w io.Writer, products []plugins.Product) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvColumns()); err != nil {
		return err
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range products {
		var attrs, variants, chart []string
		for _, k := range slices.Sorted(maps.Keys(p.Attributes)) {
			attrs = append(attrs, k+"="+p.Attributes[k])
		}
		for _, v := range p.Variants {
			variants = append(variants, fmt.Sprintf("%s:%d", v.Name, v.Stock))
		}
		for _, r := range p.SizeChart {
			chart = append(chart, fmt.Sprintf("%s:%d-%d:%d-%d", r.Size, r.MinHeight, r.MaxHeight, r.MinWeight, r.MaxWeight))
		}
		list := ""
		if p.ListPrice > 0 {
			list = num(p.ListPrice)
		}
		days, fee, ret := "", "", ""
		if sh := p.Shipping; sh != nil {
			days, fee, ret = strconv.Itoa(sh.Days), num(sh.Fee), strconv.Itoa(sh.ReturnDays)
		}
		rec := []string{p.ID, p.Name, num(p.Price), list, strconv.Itoa(p.Stock), strings.Join(p.Aliases, "|"), p.Category,
			p.Description, strings.Join(attrs, "|"), strings.Join(variants, "|"), strings.Join(chart, "|"), days, fee, ret}
		if err := cw.Write(csvRecord(rec)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
