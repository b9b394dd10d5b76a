package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/credentials"
)

func loginCommand() *command {
	return &command{
		name:  "login",
		args:  "URL",
		short: "save a token of a flowrun serve for --server",
		long: `Login saves a token of the flowrun serve at URL (a token its admin made with
flowrun tokens create), so that verbs given --server URL (or FLOWRUN_SERVER)
send it without FLOWRUN_TOKEN. The token is read from the terminal without
echo, or from stdin when it is not a terminal (one line). It is checked
against the server first: a token the server refuses is not saved. Tokens
are kept one per server in credentials.json under the user's config
directory ($XDG_CONFIG_HOME/flowrun, else ~/.config/flowrun), mode 0600; a
file others may read is refused with the fix. FLOWRUN_TOKEN, when set, wins
over a saved token. flowrun logout forgets one.`,
		reads: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usageErrorf("login takes the server's URL, got %s", plural(len(args), "argument", "arguments")).
						hint("Run: flowrun login https://flowrun.internal:8443")
				}
				u, err := api.ParseServerURL(args[0])
				if err != nil {
					return usageErrorf("%v", err)
				}
				server := u.String()
				creds, err := e.credentials()
				if err != nil {
					return err
				}
				token, err := e.readToken(server)
				if err != nil {
					return err
				}
				c, err := api.Dial(server, token, api.ClientOptions{UserAgent: "flowrun login"})
				if err != nil {
					return usageErrorf("%v", err)
				}
				defer c.Close()
				if _, err := c.Runs(ctx, api.RunsQuery{Limit: 1}); err != nil {
					var p *api.Problem
					if errors.As(err, &p) && errors.Is(err, api.ErrUnauthorized) {
						return usageErrorf("server %s refused the token: %s; nothing was saved", server, p.Detail).
							hint("Check the token with the server's admin (flowrun tokens list there), and log in again.")
					}
					return storeError("checking the token with "+server+" (nothing was saved)", err)
				}
				if err := creds.Save(server, token); err != nil {
					return credentialsError(err)
				}
				fmt.Fprintf(e.stderr, "flowrun login: the token for %s is saved in %s; verbs given --server %s send it\n", server, creds.Path, server)
				return nil
			}
		},
	}
}

func logoutCommand() *command {
	return &command{
		name:  "logout",
		args:  "[URL]",
		short: "forget the token login saved for a server",
		long: `Logout forgets the token flowrun login saved for the server at URL (default
FLOWRUN_SERVER). The token itself stays valid on the server: revoke it there
with flowrun tokens revoke NAME.`,
		reads: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			return func(ctx context.Context, args []string) error {
				raw := e.getenv("FLOWRUN_SERVER")
				switch {
				case len(args) == 1:
					raw = args[0]
				case len(args) > 1 || raw == "":
					return usageErrorf("logout takes the server's URL").hint("Run: flowrun logout https://flowrun.internal:8443")
				}
				u, err := api.ParseServerURL(raw)
				if err != nil {
					return usageErrorf("%v", err)
				}
				creds, err := e.credentials()
				if err != nil {
					return err
				}
				had, err := creds.Remove(u.String())
				if err != nil {
					return credentialsError(err)
				}
				if !had {
					fmt.Fprintf(e.stderr, "flowrun logout: no token is saved for %s\n", u)
					return nil
				}
				fmt.Fprintf(e.stderr, "flowrun logout: the token for %s is forgotten (it stays valid on the server until revoked)\n", u)
				return nil
			}
		},
	}
}

// credentials is the store of the tokens login saved: credentials.json in
// $XDG_CONFIG_HOME/flowrun, else ~/.config/flowrun.
func (e *env) credentials() (credentials.Store, error) {
	dir, ok := credentials.Dir(e.getenv("XDG_CONFIG_HOME"), e.getenv("HOME"))
	if !ok {
		return credentials.Store{}, usageErrorf("no config directory: neither XDG_CONFIG_HOME nor HOME is set").
			hint("Set HOME, or pass the token in FLOWRUN_TOKEN instead.")
	}
	return credentials.In(dir), nil
}

// credentialsError words a credentials file that cannot be used.
func credentialsError(err error) error {
	if errors.Is(err, credentials.ErrOpenToOthers) {
		return usageErrorf("%v", err).hint("A token file must be yours alone; fix its mode, then run the command again.")
	}
	return usageErrorf("the credentials file: %v", err).hint("Fix or remove it, then log in again (or pass the token in FLOWRUN_TOKEN).")
}

// maxToken bounds a token read from stdin.
const maxToken = 4096

// readToken reads a token: from the terminal without echo, or one line of
// stdin.
func (e *env) readToken(server string) (string, error) {
	var token string
	if f, ok := e.stdin.(*os.File); ok && term.IsTerminal(f.Fd()) {
		fmt.Fprintf(e.stderr, "Token for %s: ", server)
		b, err := term.ReadPassword(f.Fd())
		fmt.Fprintln(e.stderr)
		if err != nil {
			return "", fmt.Errorf("reading the token: %w", err)
		}
		token = string(b)
	} else {
		line, err := bufio.NewReader(io.LimitReader(e.stdin, maxToken+1)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("reading the token from stdin: %w", err)
		}
		if len(line) > maxToken {
			return "", usageErrorf("the token on stdin is longer than %d bytes", maxToken).hint("Pass the token flowrun tokens create printed, on one line.")
		}
		token = line
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", usageErrorf("no token was given").hint("Paste the token flowrun tokens create printed on the server, or pipe it: flowrun login URL < token.txt")
	}
	return token, nil
}
