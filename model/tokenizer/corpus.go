package tokenizer

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"strings"
)

// maxCorpusLine is the longest corpus line a Corpus reads.
const maxCorpusLine = 64 << 20

// Corpus streams the texts of a training corpus, so that training never
// holds the file in memory: plain text lines, or JSONL lines with a
// "text" field, as the first non-empty line decides. As with
// bufio.Scanner, a read or format error ends the texts and is reported
// afterwards by Err.
type Corpus struct {
	r     io.Reader
	name  string
	count int
	err   error
}

// NewCorpus returns a corpus reading r; name (a file name, or "-" for
// standard input) labels its errors.
func NewCorpus(r io.Reader, name string) *Corpus { return &Corpus{r: r, name: name} }

// Texts yields the corpus's texts in order, for Train. The corpus is read
// once: range over Texts only once.
func (c *Corpus) Texts() iter.Seq[string] {
	return func(yield func(string) bool) {
		sc := bufio.NewScanner(c.r)
		sc.Buffer(make([]byte, 0, 64<<10), maxCorpusLine)
		jsonl, decided := false, false
		lineNo := 0
		for sc.Scan() {
			lineNo++
			line := sc.Text()
			if strings.TrimSpace(line) == "" {
				continue
			}
			if !decided {
				jsonl, decided = looksLikeJSONL(line), true
			}
			text, err := readCorpusLine(line, jsonl)
			if err != nil {
				c.err = fmt.Errorf("%s line %d: %w", c.name, lineNo, err)
				return
			}
			c.count++
			if !yield(text) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			c.err = fmt.Errorf("%s line %d: %w", c.name, lineNo+1, err)
		}
	}
}

// Count returns how many texts Texts has yielded.
func (c *Corpus) Count() int { return c.count }

// Err returns the first read or format error Texts met, naming the line.
func (c *Corpus) Err() error { return c.err }
