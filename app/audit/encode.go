package audit

import (
	"encoding/json"
	"fmt"
)

// appendEntry appends e as one line of JSON (without its line end) to b.
func appendEntry(b []byte, e Entry) ([]byte, error) {
	return marshalEntry(b, e)
}

// marshalEntry appends e as json.Marshal writes it.
func marshalEntry(b []byte, e Entry) ([]byte, error) {
	line, err := json.Marshal(e)
	if err != nil {
		return b, fmt.Errorf("audit: encoding entry: %w", err)
	}
	return append(b, line...), nil
}
