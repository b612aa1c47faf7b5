package console

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// decodeStrict decodes one JSON value into v, rejecting unknown fields
// and trailing data, so that a typo in a request is an error, not a no-op.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}
