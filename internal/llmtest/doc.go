// Package llmtest is a scripted OpenAI-compatible chat server for tests: the
// LLM every CI test of the search talks to instead of a real model.
//
//	srv := llmtest.New(t,
//		llmtest.Status(500).Once(),
//		llmtest.Reply(brokenKernel).OnUser("Write a kernel").Once(),
//		llmtest.Reply(fixedKernel),             // every later request
//	)
//	client, _ := llm.New(llm.Config{BaseURL: srv.URL(), Model: "m"}, log)
//	...
//	reqs := srv.Requests() // what the client sent, in order
//
// It serves POST /v1/chat/completions (non-streaming, the OpenAI response
// shape with usage). Each request is answered by the first Script entry, in
// order, whose Match accepts it and whose Times are not used up; a request no
// entry answers fails the test and gets a 500.
//
// It imports nothing of kernelgate, so that any package, the rollout root
// included, can use it from its in-package tests without an import cycle.
// Imported only from _test.go files.
package llmtest
