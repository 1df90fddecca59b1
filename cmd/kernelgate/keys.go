package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/gateway/apikey"
)

func newKeysCmd(g *globals) *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Create, list and revoke the gateway's API keys (stored hashed in DIR/" + apikey.FileName + ")",
		Long: "API keys with scopes (reward, search, export, admin). A running `kernelgate serve` with the same\n" +
			"--data sees a change on its next request. Keys are required when serve listens beyond loopback.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown keys command %q: want create, list or revoke", args[0])}
			}
			return cmd.Help()
		},
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data", "./data", "data directory (the one given to serve)")
	cmd.AddCommand(newKeysCreateCmd(g, &dataDir), newKeysListCmd(g, &dataDir), newKeysRevokeCmd(g, &dataDir))
	return cmd
}

func newKeysCreateCmd(g *globals, dataDir *string) *cobra.Command {
	var scopes, name string
	cmd := &cobra.Command{
		Use:   "create --scopes reward[,search,export,admin] [--name NAME]",
		Short: "Create a key and print it once on stdout (only its hash is stored)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			sc, err := apikey.ParseScopes(scopes)
			if err != nil {
				return usageError{fmt.Errorf("--scopes: %w", err)}
			}
			if name != "" {
				if err := apikey.CheckName(name); err != nil {
					return usageError{fmt.Errorf("--name: %w", err)}
				}
			}
			f := apikey.NewFile(*dataDir)
			secret, k, err := f.Create(name, sc)
			if errors.Is(err, apikey.ErrExists) {
				return fmt.Errorf("a key named %q exists in %s: revoke it first or pick another --name", name, f.Path)
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(g.stdout, secret)
			fmt.Fprintf(g.stderr, "kernelgate: created key %q (scopes %s) in %s; it is shown only this once\n",
				k.Name, joinScopes(k.Scopes), f.Path)
			return nil
		},
	}
	cmd.Flags().StringVar(&scopes, "scopes", "", "comma-separated scopes: reward, search, export, admin")
	cmd.Flags().StringVar(&name, "name", "", "key name, for list and revoke (default: key-<random>)")
	_ = cmd.MarkFlagRequired("scopes")
	return cmd
}

func newKeysListCmd(g *globals, dataDir *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--json]",
		Short: "List keys: name, scopes, creation time and the key's first characters",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			keys, err := apikey.NewFile(*dataDir).Load()
			if err != nil {
				return err
			}
			if asJSON {
				type listed struct {
					Name      string         `json:"name"`
					Scopes    []apikey.Scope `json:"scopes"`
					CreatedAt time.Time      `json:"created_at"`
					Hint      string         `json:"hint"`
				}
				out := make([]listed, len(keys))
				for i, k := range keys {
					out[i] = listed{k.Name, k.Scopes, k.CreatedAt, k.Hint}
				}
				return writeJSON(g.stdout, out)
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSCOPES\tCREATED\tKEY")
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s…\n", k.Name, joinScopes(k.Scopes), k.CreatedAt.Format(time.RFC3339), k.Hint)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func newKeysRevokeCmd(g *globals, dataDir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke NAME",
		Short: "Delete a key; a running server refuses it from its next request",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("keys revoke takes one key name, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			f := apikey.NewFile(*dataDir)
			err := f.Revoke(args[0])
			if errors.Is(err, apikey.ErrNotFound) {
				return fmt.Errorf("no key named %q in %s (see `kernelgate keys list`)", args[0], f.Path)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stderr, "kernelgate: revoked key %q\n", args[0])
			return nil
		},
	}
}

func joinScopes(scopes []apikey.Scope) string {
	s := make([]string, len(scopes))
	for i, sc := range scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ",")
}
