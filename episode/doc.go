// Package episode holds multi-turn episodes (Kevin / Dr. Kernel style, in
// the shape of an OpenEnv environment): a task, a turn budget, and one step
// per completion the policy submits, each scored by the normal evaluation
// path and answered with the verdict's feedback as the next observation.
//
// State lives in a JetStream KV bucket (Store), so a gateway restart loses
// no episode: key <episode_id> holds the episode, <episode_id>.<turn> each
// step. A step is committed by creating its key, which only one writer can
// do; the episode record follows, and Load repairs it if a crash came in
// between. An episode expires after an idle period (Config.Idle) and is
// kept for reading a while longer.
//
// The rules (when an episode is done, what the observation says) are in
// rules.go. Imported by the gateway and cmd/kernelgate.
package episode
