// Package kernelgate holds what belongs to the whole project rather than to one
// part: the HTTP contract, openapi.yaml, embedded so the gateway can serve it and
// tests can hold handlers and the harness's types to it.
package kernelgate

import _ "embed"

// OpenAPI is openapi.yaml, the HTTP contract.
//
//go:embed openapi.yaml
var OpenAPI []byte
