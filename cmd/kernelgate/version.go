package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
)

// version is set at link time: -ldflags "-X main.version=v0.1.0".
var version = "dev"

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, protocol, verdict schema and embedded harness",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			v := version
			if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			fmt.Fprintf(g.stdout, "kernelgate %s (protocol %s, verdict schema %s, harness %s, %s)\n",
				v, harness.ProtocolVersion, eval.SchemaVersion, harness.EmbeddedSum(), runtime.Version())
		},
	}
}
