// Command natsnode runs one node of a NATS JetStream cluster, for the cluster
// tests (tests/e2e/test_nats_cluster.py): the nats-server module kernelgate
// already embeds, with a client port, a cluster port, routes to the other
// nodes and a monitoring port whose /healthz says when JetStream is ready.
//
//	natsnode -name n1 -port 4222 -cluster 6222 -http 8222 -routes nats://127.0.0.1:6223,... -store DIR
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

func main() {
	name := flag.String("name", "n1", "server name (unique in the cluster)")
	port := flag.Int("port", 4222, "client port on 127.0.0.1")
	clusterPort := flag.Int("cluster", 6222, "cluster (route) port on 127.0.0.1")
	httpPort := flag.Int("http", 8222, "monitoring port on 127.0.0.1 (/healthz)")
	routes := flag.String("routes", "", "the other nodes' route URLs, comma-separated")
	store := flag.String("store", "", "JetStream store directory (required)")
	flag.Parse()
	if *store == "" {
		fmt.Fprintln(os.Stderr, "natsnode: -store is required")
		os.Exit(2)
	}
	opts := &server.Options{
		ServerName: *name, Host: "127.0.0.1", Port: *port, HTTPHost: "127.0.0.1", HTTPPort: *httpPort,
		JetStream: true, StoreDir: *store, NoSigs: true,
		Cluster: server.ClusterOpts{Name: "kg", Host: "127.0.0.1", Port: *clusterPort},
	}
	for _, r := range strings.Split(*routes, ",") {
		if r = strings.TrimSpace(r); r != "" {
			u, err := url.Parse(r)
			if err != nil {
				fmt.Fprintf(os.Stderr, "natsnode: route %q: %v\n", r, err)
				os.Exit(2)
			}
			opts.Routes = append(opts.Routes, u)
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsnode:", err)
		os.Exit(1)
	}
	srv.ConfigureLogger()
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		fmt.Fprintln(os.Stderr, "natsnode: not ready after 30 s")
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "natsnode %s: clients on 127.0.0.1:%d\n", *name, *port)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
	srv.Shutdown()
	srv.WaitForShutdown()
}
