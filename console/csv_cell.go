package console

import "strings"

// formulaLeads are the first characters that make a spreadsheet (Excel,
// LibreOffice, Google Sheets) read a CSV cell as a formula or a DDE call;
// tab and carriage return are on the list because some spreadsheets strip
// them and then evaluate what follows.
const formulaLeads = "=+-@\t\r"

// csvCell neutralises a cell a spreadsheet would evaluate: one that starts
// with a formula character gets a leading apostrophe, which spreadsheets
// show as text and do not evaluate (OWASP's advice on CSV injection).
// Other cells are returned unchanged.
func csvCell(v string) string {
	if v != "" && strings.IndexByte(formulaLeads, v[0]) >= 0 {
		return "'" + v
	}
	return v
}

// csvRecord is rec with every cell passed through csvCell; rec itself is
// left unchanged.
func csvRecord(rec []string) []string {
	out := make([]string, len(rec))
	for i, v := range rec {
		out[i] = csvCell(v)
	}
	return out
}
