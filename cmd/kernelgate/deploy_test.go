package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"
)

// The README's deployment files are read by the tools that will read them:
// each NATS node's config by nats-server's own parser, each unit's
// kernelgate command line by the command's own flags.

func TestDeployNATSConfigsFormOneCluster(t *testing.T) {
	t.Setenv("KERNELGATE_NATS_TOKEN", "client-token")
	t.Setenv("NATS_ROUTE_PASSWORD", "route-secret")
	names := map[string]bool{}
	for i := 1; i <= 3; i++ {
		path := filepath.Join("..", "..", "deploy", "nats", "nats-"+string(rune('0'+i))+".conf")
		o, err := server.ProcessConfigFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !o.JetStream || o.StoreDir == "" || o.Cluster.Name != "kernelgate" || len(o.Routes) != 3 {
			t.Errorf("%s: jetstream %v store %q cluster %q routes %d", path, o.JetStream, o.StoreDir, o.Cluster.Name, len(o.Routes))
		}
		if o.Authorization != "client-token" || o.Cluster.Password != "route-secret" {
			t.Errorf("%s: the secrets do not come from the environment", path)
		}
		names[o.ServerName] = true
	}
	if len(names) != 3 {
		t.Errorf("server names %v: each node needs its own", names)
	}
}

func TestDeployUnitsRunValidCommands(t *testing.T) {
	units, _ := filepath.Glob(filepath.Join("..", "..", "deploy", "systemd", "kernelgate-*.service"))
	if len(units) < 2 {
		t.Fatalf("units %v", units)
	}
	for _, path := range units {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "\\\n", " ")
		m := regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/kernelgate (.*)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s: no kernelgate ExecStart", path)
		}
		args := strings.Fields(strings.ReplaceAll(m[1], "%i", "0"))
		g := &globals{}
		var cmd *cobra.Command
		switch args[0] {
		case "serve":
			cmd = newServeCmd(g)
		case "worker":
			cmd = newWorkerCmd(g)
		default:
			t.Fatalf("%s: command %q", path, args[0])
		}
		if err := cmd.ParseFlags(args[1:]); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if nats, _ := cmd.Flags().GetString("nats"); strings.Count(nats, "nats://") != 3 {
			t.Errorf("%s: --nats %q names not the three nodes", path, nats)
		}
		if f := cmd.Flags().Lookup("store-max-bytes"); f != nil && f.Value.String() != "" {
			if _, err := parseBytes(f.Value.String()); err != nil {
				t.Errorf("%s: --store-max-bytes: %v", path, err)
			}
		}
	}
}
