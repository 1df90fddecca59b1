package main

import (
	"encoding/json"
	"io"
)

// writeJSON prints v as indented JSON: every command's --json output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
