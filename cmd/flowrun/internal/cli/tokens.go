package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/store"
)

func tokensCommand() *command {
	return &command{
		name:  "tokens",
		args:  "create NAME [--scope read|write|deploy|admin] | list [--json] | revoke NAME",
		short: "create, list and revoke the bearer tokens of flowrun serve",
		long: `Tokens manages the bearer tokens the HTTP API (flowrun serve) accepts. create
prints a new token on stdout, once: the database keeps only its SHA-256, so
it cannot be shown again (revoke it and create another if it is lost).
--scope says what it may do: read (the GET routes), write (also start,
signal, cancel, retry and decide runs; the default) or admin (everything).
list prints the names, scopes and creation times, never a token; --json
prints an array of {name, scope, created_at}. revoke deletes a token: the
server refuses it from its next request on. NAME is 1 to 64 letters, digits,
'.', '_' or '-'.`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			scope := &choiceFlag{value: string(store.ScopeWrite), choices: []string{"read", "write", "deploy", "admin"}}
			fs.Var(scope, "scope", "create: what the token may do: read, write or admin")
			asJSON := fs.Bool("json", false, "list: print a JSON array of tokens")
			return func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return usageErrorf("tokens needs a subcommand: create, list or revoke").hint("Run: flowrun tokens create NAME [--scope read|write|deploy|admin]")
				}
				sub := args[0]
				want := map[string]int{"create": 2, "revoke": 2, "list": 1}
				n, ok := want[sub]
				if !ok {
					return usageErrorf("unknown tokens subcommand %q; use create, list or revoke", sub).hint("Run `flowrun help tokens` for the usage.")
				}
				if len(args) != n {
					return usageErrorf("tokens %s takes %s, got %d arguments", sub, map[bool]string{true: "no argument", false: "one NAME"}[n == 1], len(args)-1).
						hint("Run `flowrun help tokens` for the usage.")
				}
				if n == 2 {
					if p := api.TokenNameProblem(args[1]); p != "" {
						return usageErrorf("%s", p).hint("Name the token after who uses it, such as ci or payment-hook.")
					}
				}
				switch sub {
				case "create":
					return e.tokenCreate(ctx, args[1], store.TokenScope(scope.value))
				case "revoke":
					return e.tokenRevoke(ctx, args[1])
				}
				return e.tokenList(ctx, *asJSON)
			}
		},
	}
}

func (e *env) tokenCreate(ctx context.Context, name string, scope store.TokenScope) error {
	if e.remote.url == "" {
		// A token is made for a store that serves it: create the store.
		e.announceNewStore()
		if _, err := e.openStore(ctx, true); err != nil {
			return err
		}
	}
	d, err := e.door(ctx)
	if err != nil {
		return err
	}
	t, err := d.CreateToken(ctx, name, scope)
	if err != nil {
		return controlError(err)
	}
	fmt.Fprintln(e.stdout, t.Token)
	fmt.Fprintf(e.stderr, "flowrun tokens: created token %q with scope %s; it is shown only this once: keep it somewhere safe.\n", name, scope)
	return nil
}

func (e *env) tokenRevoke(ctx context.Context, name string) error {
	d, err := e.door(ctx)
	if errors.Is(err, errNoDatabase) {
		return e.noDatabase(fmt.Sprintf("no token is named %q", name))
	}
	if err != nil {
		return err
	}
	if _, err := d.RevokeToken(ctx, name); err != nil {
		return controlError(err)
	}
	fmt.Fprintf(e.stderr, "flowrun tokens: revoked token %q.\n", name)
	return nil
}

func (e *env) tokenList(ctx context.Context, asJSON bool) error {
	d, err := e.door(ctx)
	switch {
	case errors.Is(err, errNoDatabase):
		return e.noDatabase("")
	case err != nil:
		return err
	}
	ts, err := d.Tokens(ctx)
	if err != nil {
		return storeError("", err)
	}
	if asJSON {
		return e.writeJSON(ts)
	}
	if len(ts) == 0 {
		fmt.Fprintln(e.stderr, "flowrun tokens: no tokens; create one with: flowrun tokens create NAME")
		return nil
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "NAME\tSCOPE\tCREATED")
	for _, t := range ts {
		row(tw, t.Name, t.Scope, formatStamp(t.CreatedAt))
	}
	return tw.Flush()
}
