package runtime

import (
	"strings"
	"unicode/utf8"
)

// SpeakableChunks splits a reply into pieces a text-to-speech engine can
// start on: whole sentences, ending at 。！？!? or at a full stop followed
// by a space, in Chinese and English. Decimal points ("179.10") do not end
// a sentence.
func SpeakableChunks(reply string) []string {
	var chunks []string
	start := 0
	for i, r := range reply {
		end := false
		size := utf8.RuneLen(r)
		switch r {
		case '。', '！', '？', '!', '?', '；', '…':
			end = true
		case '.':
			next := i + size
			end = next >= len(reply) || reply[next] == ' ' || reply[next] == '\n'
		case '\n':
			end = true
		}
		if end {
			if c := strings.TrimSpace(reply[start : i+size]); c != "" {
				chunks = append(chunks, c)
			}
			start = i + size
		}
	}
	if c := strings.TrimSpace(reply[start:]); c != "" {
		chunks = append(chunks, c)
	}
	return chunks
}
