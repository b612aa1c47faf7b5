package console

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/livehat/livehat/harness/catalog"
)

// A catalog CSV has one product per row under a header row. The columns
// (header names in any order and case; the Chinese names in
// csvColumnAliases work too) are listed in console/README.md. In short:
// a blank cell is "not stated" (never 0, never "none"); lists inside a
// cell are separated by "|"; id, name and price are required.
//
//	id, link, name, price, list_price, stock ("" not stated), stock_state (in_stock|low|sold_out|presale),
//	restock_date, presale_ship_date (YYYY-MM-DD), limit_per_buyer, aliases, category, description,
//	variants ("[axis=]name[:stock[:price[:state[:restock_date]]]]|…"),
//	specs ("key[label;label_zh]=value|…": 30 h is a number with a unit, yes/no a yes/no, "5.3" quoted a text,
//	       text / 中文 a text with its Chinese form),
//	ingredients, allergens ("none" states there are none), shelf_life_days, best_before, certifications,
//	size_chart ("M:155-168:45-60|XXL:185-:80-": size:height cm:weight kg, open ends allowed),
//	ship_from, dispatch_hours, shipping_fee ("" not stated, 0 free), carrier, excluded_regions,
//	returns ("no" | "yes" | "7" | "7 no_reason insured"), return_conditions
//
// The version 1 columns still import: attributes ("volume=30ml|…", text
// specs), shipping_days (dispatch in days) and return_days (7: seven-day
// no-reason returns; 0: no returns).
//
// Rows are numbered as a spreadsheet shows them: the header is row 1.
// Commas separate fields; a file whose header has tabs or semicolons and
// no comma is read with that separator.

// catalogProblem is one thing wrong with an imported catalog: where
// (row, column) and what.
type catalogProblem struct {
	// Section is "file", "products", "coupons" or "promotions".
	Section string `json:"section"`
	// Row is the CSV line (the header is 1), or the 1-based position of
	// the entry in its JSON list; 0 when the problem is not about one row.
	Row int `json:"row,omitempty"`
	// Column is the CSV column, or the field inside the JSON entry
	// ("shipping.fee").
	Column string `json:"column,omitempty"`
	// Line and Char locate a JSON problem in the file, from 1 (Char counts
	// characters); 0 when unknown or for a CSV.
	Line    int    `json:"line,omitempty"`
	Char    int    `json:"char,omitempty"`
	Message string `json:"message"`
	// Code is the problem's stable kind (harness/catalog's codes, or the
	// CSV reader's csv_… codes), which a page words in its reader's
	// language; Params are the values it names (catalogParams).
	Code   string   `json:"code,omitempty"`
	Params []string `json:"params,omitempty"`
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

// add adds a problem of the CSV reader: code and params word it in
// another language (csv_… codes, listed in console/README.md).
func (l *problemList) add(section string, row int, column, code string, params []string, format string, args ...any) {
	n := len(*l)
	l.addAt(section, row, column, 0, 0, format, args...)
	if len(*l) > n {
		(*l)[n].Code, (*l)[n].Params = code, params
	}
}

// addAt adds a problem that also has a place in a JSON file; the message
// names it, since the page shows the row, the column and the message.
func (l *problemList) addAt(section string, row int, column string, line, char int, format string, args ...any) {
	if len(*l) >= maxCatalogProblems {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg += fmt.Sprintf(" (line %d, column %d)", line, char)
	}
	*l = append(*l, catalogProblem{Section: section, Row: row, Column: column, Line: line, Char: char, Message: msg})
}

// addCatalog adds a problem of the catalog check at a row and column,
// with its code and params; productRow is the row of the products entry
// of a 0-based index.
func (l *problemList) addCatalog(p catalog.Problem, section string, row int, column string, line, char int, msg string, productRow func(int) int) {
	n := len(*l)
	l.addAt(section, row, column, line, char, "%s", msg)
	if len(*l) > n {
		(*l)[n].Code, (*l)[n].Params = p.Code, catalogParams(p, productRow)
	}
}

// catalogParams are a catalog problem's params as the API gives them:
// the 0-based positions some codes name become 1-based rows, as the
// problem's own row is (a product's through productRow).
func catalogParams(p catalog.Problem, productRow func(int) int) []string {
	out := slices.Clone(p.Params)
	at := func(k int, product bool) {
		if k >= len(out) {
			return
		}
		i, err := strconv.Atoi(out[k])
		if err != nil {
			return
		}
		if product {
			out[k] = strconv.Itoa(productRow(i))
		} else {
			out[k] = strconv.Itoa(i + 1)
		}
	}
	switch p.Code {
	case "id_taken":
		at(2, len(out) > 1 && out[1] == "products")
	case "link_taken":
		at(1, true)
	case "spec_key_taken", "size_taken", "variant_repeats":
		at(1, false)
	case "duplicate_item":
		at(0, false)
	}
	return out
}

func (l problemList) full() bool { return len(l) >= maxCatalogProblems }

// csvColumns are the canonical column names in export order.
func csvColumns() []string {
	return []string{"id", "link", "name", "price", "list_price", "stock", "stock_state", "restock_date", "presale_ship_date",
		"limit_per_buyer", "aliases", "category", "description", "variants", "specs", "ingredients", "allergens",
		"shelf_life_days", "best_before", "certifications", "size_chart", "ship_from", "dispatch_hours", "shipping_fee",
		"carrier", "excluded_regions", "returns", "return_conditions"}
}

// csvVersion1Columns are the columns of the version 1 CSV that import
// still reads.
func csvVersion1Columns() []string { return []string{"attributes", "shipping_days", "return_days"} }

// csvColumnAliases maps the Chinese header names to the canonical ones.
func csvColumnAliases() map[string]string {
	return map[string]string{
		"商品id": "id", "编号": "id", "商品编号": "id", "链接": "link", "链接号": "link", "名称": "name", "商品名称": "name", "商品名": "name",
		"价格": "price", "直播价": "price", "原价": "list_price", "划线价": "list_price", "库存": "stock", "库存状态": "stock_state",
		"补货日期": "restock_date", "到货日期": "restock_date", "预售发货日期": "presale_ship_date", "限购": "limit_per_buyer",
		"别名": "aliases", "类目": "category", "分类": "category", "描述": "description", "介绍": "description",
		"规格": "variants", "参数": "specs", "配料": "ingredients", "成分": "ingredients", "配料表": "ingredients",
		"过敏原": "allergens", "保质期天数": "shelf_life_days", "保质期": "shelf_life_days", "最佳食用日期": "best_before",
		"有效期至": "best_before", "认证": "certifications", "资质": "certifications", "尺码表": "size_chart",
		"发货地": "ship_from", "发货时效": "dispatch_hours", "发货小时": "dispatch_hours", "运费": "shipping_fee",
		"快递": "carrier", "物流": "carrier", "不发货地区": "excluded_regions", "退货": "returns", "退换货": "returns",
		"退货条件": "return_conditions", "属性": "attributes", "发货天数": "shipping_days", "退货天数": "return_days",
	}
}

// parseCatalogCSV reads products from a catalog CSV, with the CSV line of
// each. It returns every problem of the cells it finds (up to
// maxCatalogProblems), with the products read so far unless the file as
// a whole does not read; a cell that does not read leaves its field
// unset. The rules that relate fields are checked on the whole catalog
// (importCatalogCSV).
func parseCatalogCSV(data []byte) ([]catalog.Product, []int, problemList) {
	var probs problemList
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalidUTF8(data)], []byte("\n"))
		probs.add("file", line, "", "csv_not_utf8", nil, "the file is not UTF-8 text: save it as \"CSV UTF-8\"")
		return nil, nil, probs
	}
	if len(bytes.TrimSpace(data)) == 0 {
		probs.add("file", 0, "", "csv_empty", nil, "the file is empty")
		return nil, nil, probs
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = csvSeparator(data)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		probs.add("file", 1, "", "csv_unreadable", []string{csvErrorText(err)}, "the header row cannot be read: %s", csvErrorText(err))
		return nil, nil, probs
	}
	known := append(csvColumns(), csvVersion1Columns()...)
	cols := map[string]int{}
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		if alias, ok := csvColumnAliases()[name]; ok {
			name = alias
		}
		switch {
		case name == "":
			probs.add("products", 1, fmt.Sprintf("#%d", i+1), "csv_empty_column", []string{strconv.Itoa(i + 1)}, "the header has an empty column name")
		case !slices.Contains(known, name):
			msg := fmt.Sprintf("unknown column %q", h)
			code, params := "csv_unknown_column", []string{h}
			if hint := nearest(name, known); hint != "" {
				msg += fmt.Sprintf("; did you mean %q?", hint)
				code, params = "csv_unknown_column_hint", []string{h, hint}
			}
			probs.add("products", 1, h, code, params, "%s (the columns are %s)", msg, strings.Join(csvColumns(), ", "))
		default:
			if _, dup := cols[name]; dup {
				probs.add("products", 1, name, "csv_column_twice", []string{name}, "column %q appears twice", name)
			}
			cols[name] = i
		}
	}
	for _, req := range []string{"id", "name", "price"} {
		if _, ok := cols[req]; !ok {
			probs.add("products", 1, req, "csv_missing_column", []string{req}, "the header has no %q column", req)
		}
	}
	for _, pair := range [][2]string{{"dispatch_hours", "shipping_days"}, {"returns", "return_days"}, {"specs", "attributes"}} {
		_, a := cols[pair[0]]
		_, b := cols[pair[1]]
		if a && b {
			probs.add("products", 1, pair[1], "csv_both_columns", []string{pair[0], pair[1]}, "give %s or the older %s, not both", pair[0], pair[1])
		}
	}
	if len(probs) > 0 {
		return nil, nil, probs
	}
	var out []catalog.Product
	var lines []int
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
			probs.add("products", line, "", "csv_unreadable", []string{csvErrorText(err)}, "%s", csvErrorText(err))
			break
		}
		line, _ := r.FieldPos(0)
		if len(rec) > len(header) {
			probs.add("products", line, "", "csv_too_many_fields", []string{strconv.Itoa(len(rec)), strconv.Itoa(len(header))},
				"%d fields, but the header has %d columns", len(rec), len(header))
			continue
		}
		cell := func(col string) string {
			i, ok := cols[col]
			if !ok || i >= len(rec) {
				return ""
			}
			return uncell(strings.TrimSpace(rec[i]))
		}
		if allEmpty(rec) {
			continue
		}
		if len(out) == maxCatalogProducts {
			probs.add("products", line, "", "csv_too_many_products", []string{strconv.Itoa(maxCatalogProducts)}, "more than %d products", maxCatalogProducts)
			break
		}
		p, rowProbs := productFromRow(cell)
		for _, rp := range rowProbs {
			probs.add("products", line, rp.column, rp.code, rp.params, "%s", rp.message)
		}
		out = append(out, p)
		lines = append(lines, line)
	}
	if len(out) == 0 && len(probs) == 0 {
		probs.add("file", 0, "", "csv_no_rows", nil, "the file has a header but no product rows")
	}
	return out, lines, probs
}

// uncell undoes csvCell: a cell that starts with an apostrophe and then a
// formula character was neutralised on export and means the rest.
func uncell(v string) string {
	if len(v) > 1 && v[0] == '\'' && strings.IndexByte(formulaLeads, v[1]) >= 0 {
		return v[1:]
	}
	return v
}

// nearest returns the name in names closest to s when it is close enough
// to be a misspelling (at most a third of its letters off), else "".
func nearest(s string, names []string) string {
	best, bestD := "", len(s)/3+1
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
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

// cellProblem is a problem of one cell of a row.
type cellProblem struct {
	column, message string
	code            string
	params          []string
}

// rowReader reads the cells of one row into a product, collecting the
// problems of cells that do not read.
type rowReader struct {
	cell  func(string) string
	probs []cellProblem
}

// bad records a problem of the cell in col with its code and params.
func (r *rowReader) bad(col, code string, params []string, format string, args ...any) {
	r.probs = append(r.probs, cellProblem{column: col, message: fmt.Sprintf(format, args...), code: code, params: params})
}

// count reads a whole number; a blank cell is 0, not stated.
func (r *rowReader) count(col string) int {
	s := r.cell(col)
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		r.bad(col, "csv_not_whole", []string{s}, "%q is not a whole number", s)
	}
	return n
}

// positive reads a whole number of 1 or more; a blank cell is 0, not
// stated, and a 0 written out is refused, since it would read as a fact.
func (r *rowReader) positive(col string) int {
	s := r.cell(col)
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		r.bad(col, "csv_not_whole", []string{s}, "%q is not a whole number", s)
	case n < 1:
		r.bad(col, "csv_not_positive", []string{s}, "%q: write 1 or more, or leave the cell blank when it is not stated", s)
	}
	return n
}

// optCount reads a whole number that may be not stated (blank).
func (r *rowReader) optCount(col string) *int {
	if r.cell(col) == "" {
		return nil
	}
	n := r.count(col)
	return &n
}

func (r *rowReader) money(col string, required bool) float64 {
	v, err := parseMoney(r.cell(col), required)
	if err != nil {
		r.bad(col, "csv_bad_money", []string{r.cell(col)}, "%v", err)
	}
	return v
}

func (r *rowReader) date(col, s string) catalog.Date {
	if s == "" {
		return catalog.Date{}
	}
	d, err := catalog.ParseDate(s)
	if err != nil {
		r.bad(col, "csv_bad_date", []string{s}, "%v", err)
	}
	return d
}

// stockStates maps the words a spreadsheet may hold to stock states.
func stockStates() map[string]catalog.StockState {
	return map[string]catalog.StockState{
		"in_stock": catalog.InStock, "in stock": catalog.InStock, "有货": catalog.InStock, "现货": catalog.InStock,
		"low": catalog.LowStock, "少量": catalog.LowStock, "库存紧张": catalog.LowStock,
		"sold_out": catalog.SoldOut, "sold out": catalog.SoldOut, "售罄": catalog.SoldOut, "已售罄": catalog.SoldOut,
		"presale": catalog.Presale, "预售": catalog.Presale,
	}
}

func (r *rowReader) stockState(col, s string) catalog.StockState {
	if s == "" {
		return ""
	}
	st, ok := stockStates()[strings.ToLower(s)]
	if !ok {
		r.bad(col, "csv_bad_stock_state", []string{s}, "%q is not a stock state (in_stock, low, sold_out or presale)", s)
	}
	return st
}

// productFromRow reads one product from a row's cells. Values the cells
// hold are checked by the catalog (importCatalogCSV); here only what does
// not read is a problem.
func productFromRow(cell func(string) string) (catalog.Product, []cellProblem) {
	r := &rowReader{cell: cell}
	p := catalog.Product{ID: cell("id"), Name: cell("name"), Category: cell("category"), Description: cell("description")}
	p.Link = r.positive("link")
	p.Price = r.money("price", true)
	p.ListPrice = r.money("list_price", false)
	p.StockState = r.stockState("stock_state", cell("stock_state"))
	p.RestockDate = r.date("restock_date", cell("restock_date"))
	p.PresaleShipDate = r.date("presale_ship_date", cell("presale_ship_date"))
	p.LimitPerBuyer = r.positive("limit_per_buyer")
	p.Aliases = splitList(cell("aliases"))
	p.Ingredients = splitList(cell("ingredients"))
	p.Certifications = splitList(cell("certifications"))
	p.ShelfLifeDays = r.positive("shelf_life_days")
	p.BestBefore = r.date("best_before", cell("best_before"))
	switch a := cell("allergens"); strings.ToLower(a) {
	case "":
	case "none", "无", "不含":
		p.Allergens = []string{}
	default:
		p.Allergens = splitList(a)
	}
	for _, kv := range splitList(cell("attributes")) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			r.bad("attributes", "csv_bad_attribute", []string{kv}, "%q is not key=value", kv)
			continue
		}
		p.Specs = append(p.Specs, catalog.Spec{Key: strings.TrimSpace(k), Value: catalog.TextValue(strings.TrimSpace(v))})
	}
	for _, s := range splitList(cell("specs")) {
		spec, err := parseSpec(s)
		if err != nil {
			r.bad("specs", "csv_bad_spec", []string{s}, "%v", err)
			continue
		}
		p.Specs = append(p.Specs, spec)
	}
	for _, vs := range splitList(cell("variants")) {
		p.Variants = append(p.Variants, r.variant(vs))
	}
	for _, row := range splitList(cell("size_chart")) {
		sr, err := parseSizeRow(row)
		if err != nil {
			r.bad("size_chart", "csv_bad_size_row", []string{row}, "%v", err)
			continue
		}
		p.SizeChart = append(p.SizeChart, sr)
	}
	p.Stock = r.optCount("stock")
	if p.Stock == nil {
		// Variants that all state their stock state the product's: their
		// sum, as a version 1 file meant by a blank stock.
		p.Stock = variantSum(p.Variants)
	}
	r.shipping(&p)
	r.returns(&p)
	return p, r.probs
}

// variantSum is the stock of variants on one axis that all state theirs,
// or nil.
func variantSum(vs []catalog.Variant) *int {
	if len(vs) == 0 {
		return nil
	}
	sum := 0
	for _, v := range vs {
		if v.Stock == nil || v.Axis != vs[0].Axis {
			return nil
		}
		sum += *v.Stock
	}
	return &sum
}

// variant reads "[axis=]name[:stock[:price[:state[:restock_date]]]]".
func (r *rowReader) variant(s string) catalog.Variant {
	var v catalog.Variant
	parts := strings.Split(s, ":")
	if len(parts) > 5 {
		r.bad("variants", "csv_variant_fields", []string{s}, "%q has more than name:stock:price:state:restock_date", s)
		return v
	}
	for len(parts) < 5 {
		parts = append(parts, "")
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	v.Name = parts[0]
	if axis, name, ok := strings.Cut(parts[0], "="); ok {
		v.Axis, v.Name = strings.TrimSpace(axis), strings.TrimSpace(name)
	}
	if parts[1] != "" {
		n, err := strconv.Atoi(parts[1])
		if err != nil {
			r.bad("variants", "csv_variant_stock", []string{s, parts[1]}, "%q: stock %q is not a whole number", s, parts[1])
		}
		v.Stock = &n
	}
	if parts[2] != "" {
		price, err := parseMoney(parts[2], true)
		if err != nil {
			r.bad("variants", "csv_variant_price", []string{s, parts[2]}, "%q: price %v", s, err)
		}
		v.Price = &price
	}
	v.StockState = r.stockState("variants", parts[3])
	v.RestockDate = r.date("variants", parts[4])
	return v
}

// shipping reads the delivery columns; nothing stated leaves none.
func (r *rowReader) shipping(p *catalog.Product) {
	sh := catalog.Shipping{ShipFrom: r.cell("ship_from"), Carrier: r.cell("carrier"), ExcludedRegions: splitList(r.cell("excluded_regions"))}
	sh.DispatchHours = r.positive("dispatch_hours")
	if days := r.cell("shipping_days"); days != "" {
		sh.DispatchHours = 24 * r.positive("shipping_days")
	}
	if r.cell("shipping_fee") != "" {
		fee := r.money("shipping_fee", true)
		sh.Fee = &fee
	}
	if sh.ShipFrom != "" || sh.Carrier != "" || len(sh.ExcludedRegions) > 0 || sh.DispatchHours != 0 || sh.Fee != nil {
		p.Shipping = &sh
	}
}

// returnWord matches the words of a returns cell.
var returnWord = regexp.MustCompile(`^(\d+)\s*(?:d|days?|天)?$`)

// returns reads the returns columns: "no", "yes", "7", "7 no_reason
// insured" (also 不退, 可退, 7天, 无理由, 运费险, and "7天无理由"); or the
// version 1 return_days (0: no returns, N: N days without a reason).
func (r *rowReader) returns(p *catalog.Product) {
	conditions := splitList(r.cell("return_conditions"))
	if s := r.cell("return_days"); s != "" {
		switch n := r.count("return_days"); {
		case n > 0:
			p.Returns = &catalog.Returns{Accepted: true, Days: n, NoReason: true, Conditions: conditions}
		case n == 0:
			p.Returns = &catalog.Returns{Conditions: conditions}
		default:
			r.bad("return_days", "csv_negative", []string{strconv.Itoa(n)}, "%d is negative", n)
		}
		return
	}
	s := r.cell("returns")
	if s == "" {
		if len(conditions) > 0 {
			r.bad("return_conditions", "csv_conditions_without_returns", nil, "conditions need a returns cell that says whether returns are accepted")
		}
		return
	}
	rt := &catalog.Returns{Conditions: conditions}
	// "no" wins over the words that imply returns, so that "no 7" is
	// reported as a window on no returns rather than read as returns.
	refused, accepted, unread := false, false, false
	s = strings.NewReplacer("无理由", " no_reason ", "运费险", " insured ", "，", " ", ",", " ", "+", " ").Replace(s)
	for _, w := range strings.Fields(s) {
		lw := strings.ToLower(w)
		switch m := returnWord.FindStringSubmatch(lw); {
		case lw == "no" || lw == "none" || w == "不退" || w == "不支持退货" || w == "不支持退换":
			refused = true
		case lw == "yes" || w == "可退" || w == "支持退货":
			accepted = true
		case m != nil:
			rt.Days, _ = strconv.Atoi(m[1])
			accepted = true
		case lw == "no_reason":
			rt.NoReason, accepted = true, true
		case w == "退货" || w == "退换":
		case lw == "insured":
			rt.ShippingInsurance, accepted = true, true
		default:
			r.bad("returns", "csv_bad_returns_word", []string{w}, "%q is not a word of returns (no, yes, a number of days, no_reason, insured)", w)
			unread = true
		}
	}
	rt.Accepted = accepted && !refused
	if !accepted && !refused && !unread {
		r.bad("returns", "csv_returns_unsaid", nil, "say whether returns are accepted: no, yes or a number of days")
	}
	p.Returns = rt
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

// specNumber is a number with an optional unit: "30", "30 h", "220g/m²".
var specNumber = regexp.MustCompile(`^(-?[0-9]+(?:\.[0-9]+)?)\s*([\p{L}%°µ][^|]*)?$`)

// specKey is a spec's key with optional labels: "key[label;label_zh]".
var specKey = regexp.MustCompile(`^([^\[\]=]+?)\s*(?:\[([^;\]]*)(?:;([^\]]*))?\])?$`)

// parseSpec reads "key[label;label_zh]=value". The value is a yes/no
// (yes, no, true, false, 是, 否), a number with an optional unit ("30 h"),
// or a text; a quoted value ("\"5.3\"") is always a text, and a text may
// carry its Chinese form after " / ".
func parseSpec(s string) (catalog.Spec, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return catalog.Spec{}, fmt.Errorf("%q is not key=value", s)
	}
	m := specKey.FindStringSubmatch(strings.TrimSpace(k))
	if m == nil || strings.TrimSpace(m[1]) == "" {
		return catalog.Spec{}, fmt.Errorf("%q: %q is not a key with optional [label;label_zh]", s, strings.TrimSpace(k))
	}
	spec := catalog.Spec{Key: strings.TrimSpace(m[1]), Label: strings.TrimSpace(m[2]), LabelZh: strings.TrimSpace(m[3])}
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, `"`) {
		end := strings.Index(v[1:], `"`)
		if end < 0 {
			return catalog.Spec{}, fmt.Errorf("%q: the quoted value has no closing quote", s)
		}
		text, rest := v[1:1+end], strings.TrimSpace(v[2+end:])
		spec.Value = catalog.TextValue(text)
		if rest != "" {
			zh, ok := strings.CutPrefix(rest, "/")
			if !ok {
				return catalog.Spec{}, fmt.Errorf("%q: after the quoted value comes only / and its Chinese form", s)
			}
			spec.ValueZh = strings.TrimSpace(zh)
		}
		return spec, nil
	}
	switch strings.ToLower(v) {
	case "yes", "true", "是":
		spec.Value = catalog.BoolValue(true)
		return spec, nil
	case "no", "false", "否":
		spec.Value = catalog.BoolValue(false)
		return spec, nil
	}
	if n := specNumber.FindStringSubmatch(v); n != nil {
		x, err := strconv.ParseFloat(n[1], 64)
		if err == nil {
			spec.Value, spec.Unit = catalog.NumberValue(x), strings.TrimSpace(n[2])
			return spec, nil
		}
	}
	if text, zh, ok := strings.Cut(v, " / "); ok {
		spec.Value, spec.ValueZh = catalog.TextValue(strings.TrimSpace(text)), strings.TrimSpace(zh)
		return spec, nil
	}
	spec.Value = catalog.TextValue(v)
	return spec, nil
}

// formatSpec writes a spec as parseSpec reads it.
func formatSpec(s catalog.Spec) string {
	var b strings.Builder
	b.WriteString(s.Key)
	if s.Label != "" || s.LabelZh != "" {
		b.WriteString("[" + s.Label)
		if s.LabelZh != "" {
			b.WriteString(";" + s.LabelZh)
		}
		b.WriteString("]")
	}
	b.WriteString("=")
	if x, ok := s.Value.Number(); ok {
		b.WriteString(num(x))
		if s.Unit != "" {
			b.WriteString(" " + s.Unit)
		}
		return b.String()
	}
	if v, ok := s.Value.Bool(); ok {
		b.WriteString(map[bool]string{true: "yes", false: "no"}[v])
		return b.String()
	}
	text, _ := s.Value.Text()
	// A text that would read back as something else is quoted.
	if back, err := parseSpec("k=" + text); err != nil || back.Value != s.Value || back.ValueZh != "" || back.Unit != "" || text != strings.TrimSpace(text) {
		b.WriteString(`"` + text + `"`)
	} else {
		b.WriteString(text)
	}
	if s.ValueZh != "" {
		b.WriteString(" / " + s.ValueZh)
	}
	return b.String()
}

// parseSizeRow reads "M:155-168:45-60"; a range may be open at either
// end ("185-", "-160") or blank, and at least one bound is stated.
func parseSizeRow(s string) (catalog.SizeRow, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return catalog.SizeRow{}, fmt.Errorf("%q is not size:minHeight-maxHeight:minWeight-maxWeight", s)
	}
	rng := func(v string) (float64, float64, error) {
		v = strings.TrimSpace(v)
		if v == "" {
			return 0, 0, nil
		}
		a, b, ok := strings.Cut(v, "-")
		bound := func(x string) (float64, error) {
			if x = strings.TrimSpace(x); x == "" {
				return 0, nil
			}
			f, err := strconv.ParseFloat(x, 64)
			if err != nil || f <= 0 || math.IsInf(f, 0) {
				return 0, fmt.Errorf("%q in %q is not a range like 155-168, 185- or -160", v, s)
			}
			return f, nil
		}
		if !ok {
			return 0, 0, fmt.Errorf("%q in %q is not a range like 155-168, 185- or -160", v, s)
		}
		lo, err := bound(a)
		if err != nil {
			return 0, 0, err
		}
		hi, err := bound(b)
		return lo, hi, err
	}
	row := catalog.SizeRow{Size: strings.TrimSpace(parts[0])}
	var err error
	if row.MinHeightCM, row.MaxHeightCM, err = rng(parts[1]); err != nil {
		return row, err
	}
	if row.MinWeightKG, row.MaxWeightKG, err = rng(parts[2]); err != nil {
		return row, err
	}
	return row, nil
}

// formatRange writes a size range as parseSizeRow reads it.
func formatRange(lo, hi float64) string {
	if lo == 0 && hi == 0 {
		return ""
	}
	s := ""
	if lo > 0 {
		s = num(lo)
	}
	s += "-"
	if hi > 0 {
		s += num(hi)
	}
	return s
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// csvProblems names a catalog's problems by CSV row and column: rows[i]
// is the line of products[i]. References to other products in a message
// ("the id of products[0]") name their row too.
func csvProblems(err error, rows []int) problemList {
	var probs problemList
	var ps *catalog.Problems
	if !errors.As(err, &ps) {
		probs.add("file", 0, "", "catalog_unreadable", []string{err.Error()}, "%v", err)
		return probs
	}
	row := func(i int) int {
		if i >= 0 && i < len(rows) {
			return rows[i]
		}
		return 0
	}
	for _, p := range ps.List {
		msg := productRef.ReplaceAllStringFunc(p.Message, func(ref string) string {
			i, _ := strconv.Atoi(productRef.FindStringSubmatch(ref)[1])
			return fmt.Sprintf("row %d", row(i))
		})
		section, i, field := jsonPlace(p.Path)
		if section != "products" {
			probs.addCatalog(p, section, i, field, 0, 0, msg, row)
			continue
		}
		probs.addCatalog(p, "products", row(i-1), csvColumnOf(field), 0, 0, msg, row)
	}
	if ps.Omitted > 0 {
		probs.add("file", 0, "", "more_problems", []string{strconv.Itoa(ps.Omitted)}, "and %d more problems", ps.Omitted)
	}
	return probs
}

// productRef finds a reference to a product by its list position.
var productRef = regexp.MustCompile(`products\[(\d+)\]`)

// csvColumnOf names the CSV column that holds a product field
// ("shipping.fee" is shipping_fee, "variants[2].stock" is variants).
func csvColumnOf(field string) string {
	head, rest, _ := strings.Cut(field, ".")
	head, _, _ = strings.Cut(head, "[")
	switch head {
	case "shipping":
		sub, _, _ := strings.Cut(rest, "[")
		if sub == "fee" {
			return "shipping_fee"
		}
		return sub
	case "returns":
		if strings.HasPrefix(rest, "conditions") {
			return "return_conditions"
		}
		return "returns"
	}
	return head
}

// writeCatalogCSV writes products in the import format, so that an export
// can be edited in a spreadsheet and imported again. Cells a spreadsheet
// would evaluate are neutralised (csvCell).
func writeCatalogCSV(w io.Writer, products []catalog.Product) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvColumns()); err != nil {
		return err
	}
	for _, p := range products {
		var variants, specs, chart []string
		for _, v := range p.Variants {
			variants = append(variants, formatVariant(v))
		}
		for _, s := range p.Specs {
			specs = append(specs, formatSpec(s))
		}
		for _, r := range p.SizeChart {
			chart = append(chart, r.Size+":"+formatRange(r.MinHeightCM, r.MaxHeightCM)+":"+formatRange(r.MinWeightKG, r.MaxWeightKG))
		}
		optional := func(n int) string {
			if n == 0 {
				return ""
			}
			return strconv.Itoa(n)
		}
		stock := ""
		if p.Stock != nil {
			stock = strconv.Itoa(*p.Stock)
		}
		list := ""
		if p.ListPrice > 0 {
			list = num(p.ListPrice)
		}
		allergens := strings.Join(p.Allergens, "|")
		if p.Allergens != nil && len(p.Allergens) == 0 {
			allergens = "none"
		}
		var shipFrom, hours, fee, carrier, excluded string
		if sh := p.Shipping; sh != nil {
			shipFrom, hours, carrier, excluded = sh.ShipFrom, optional(sh.DispatchHours), sh.Carrier, strings.Join(sh.ExcludedRegions, "|")
			if sh.Fee != nil {
				fee = num(*sh.Fee)
			}
		}
		var returns, conditions string
		if rt := p.Returns; rt != nil {
			returns, conditions = formatReturns(*rt), strings.Join(rt.Conditions, "|")
		}
		rec := []string{p.ID, optional(p.Link), p.Name, num(p.Price), list, stock, string(p.StockState), p.RestockDate.String(),
			p.PresaleShipDate.String(), optional(p.LimitPerBuyer), strings.Join(p.Aliases, "|"), p.Category, p.Description,
			strings.Join(variants, "|"), strings.Join(specs, "|"), strings.Join(p.Ingredients, "|"), allergens,
			optional(p.ShelfLifeDays), p.BestBefore.String(), strings.Join(p.Certifications, "|"), strings.Join(chart, "|"),
			shipFrom, hours, fee, carrier, excluded, returns, conditions}
		if err := cw.Write(csvRecord(rec)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// formatVariant writes a variant as rowReader.variant reads it, leaving
// off the parts it does not state.
func formatVariant(v catalog.Variant) string {
	name := v.Name
	if v.Axis != "" {
		name = v.Axis + "=" + name
	}
	parts := []string{name, "", "", string(v.StockState), v.RestockDate.String()}
	if v.Stock != nil {
		parts[1] = strconv.Itoa(*v.Stock)
	}
	if v.Price != nil {
		parts[2] = num(*v.Price)
	}
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, ":")
}

// formatReturns writes a return rule as rowReader.returns reads it.
func formatReturns(rt catalog.Returns) string {
	if !rt.Accepted {
		return "no"
	}
	words := []string{"yes"}
	if rt.Days > 0 {
		words[0] = strconv.Itoa(rt.Days)
	}
	if rt.NoReason {
		words = append(words, "no_reason")
	}
	if rt.ShippingInsurance {
		words = append(words, "insured")
	}
	return strings.Join(words, " ")
}
