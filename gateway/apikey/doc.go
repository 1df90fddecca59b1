// Package apikey holds the gateway's API keys: their scopes, the key file
// under the data directory (hashes only, written atomically, mode 0600) and
// the Keyring the server checks bearer tokens against, which rereads the file
// when it changes, so `kernelgate keys create/revoke` take effect on the next
// request without a restart.
//
// Imported by gateway (the auth middleware) and cmd/kernelgate (keys commands).
package apikey
