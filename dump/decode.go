package dump

import (
	"encoding/json"
	"fmt"
)

// Decode parses one dump and checks it with Validate, so a caller holding the result
// can rely on the spec's structural promises (index order, parents preceding
// children, depths, a version).
func Decode(data []byte) (*Dump, error) {
	var d Dump
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &d, nil
}
