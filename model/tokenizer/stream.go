package tokenizer

// StreamDecoder turns ids into text one at a time, for streaming generation:
// a character split across tokens is held back until it is complete, so the
// pieces returned by Next and Flush concatenate to Decode of all the ids.
// A StreamDecoder is not safe for concurrent use.
type StreamDecoder struct {
	tok     *Tokenizer
	pending []byte
}

// NewStreamDecoder returns a decoder with nothing pending.
func (t *Tokenizer) NewStreamDecoder() *StreamDecoder { return &StreamDecoder{tok: t} }

// Next adds the bytes of id (none if id is unknown) and returns the text that
// became complete.
func (d *StreamDecoder) Next(id int) string {
	d.pending = append(d.pending, d.tok.TokenBytes(id)...)
	cut := incompleteSuffix(d.pending)
	if cut == 0 {
		return ""
	}
	out := string(appendLossyUTF8(nil, d.pending[:cut]))
	d.pending = append(d.pending[:0], d.pending[cut:]...)
	return out
}

// Flush returns what is still pending (an incomplete character becomes
// U+FFFD) and resets the decoder.
func (d *StreamDecoder) Flush() string {
	out := string(appendLossyUTF8(nil, d.pending))
	d.pending = d.pending[:0]
	return out
}

// incompleteSuffix returns where a trailing, still-completable UTF-8 sequence
// begins in b (len(b) if there is none).
func incompleteSuffix(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return len(b)
		}
		if c < 0xC0 {
			continue // continuation byte: look further back for its lead
		}
		var need int
		switch {
		case c >= 0xF0:
			need = 4
		case c >= 0xE0:
			need = 3
		default:
			need = 2
		}
		if k < need && maximalSubpart(b[len(b)-k:]) == k {
			return len(b) - k
		}
		return len(b)
	}
	return len(b)
}
