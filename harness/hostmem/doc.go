// Package hostmem reads how much memory this host lets kernelgate use: the
// MemTotal of /proc/meminfo, lowered by a cgroup v2 memory.max set on the
// process's cgroup or any cgroup above it (a container's limit).
//
// It reads through an fs.FS rooted at "/" (os.DirFS("/") in production, an
// fstest.MapFS in tests), so every derivation can be tested without the
// machine it describes. cgroup v1 limits (memory.limit_in_bytes) are not read.
//
// Who imports it: cmd/kernelgate, for serve's --max-memory-mb default and the
// memory_limit_mb that eval and bench give each evaluation. It imports only
// the standard library.
package hostmem
