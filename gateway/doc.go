// Package gateway is kernelgate's HTTP API (openapi.yaml): health, readiness
// and POST /v1/rewards, which queues one job per completion on the bus and
// answers the verdicts in request order. It is the only package that imports
// gin. Every error answer comes from the table in errors.go.
//
// Imported by cmd/kernelgate.
package gateway
