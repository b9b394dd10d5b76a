package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/project"
)

const serverUsage = "read and steer the runs of this flowrun serve (https://HOST:PORT) instead of a store (default $FLOWRUN_SERVER; the token is $FLOWRUN_TOKEN)"

// remoteTarget is where a verb that can go through the API reads and
// steers runs: a server's URL and where it came from, or none (the
// store).
type remoteTarget struct {
	url    string
	from   string      // "--server", "FLOWRUN_SERVER" or the config file
	client *api.Client // once dialed
}

// chooseServer picks the verb's server: --server, else (unless --db or
// FLOWRUN_DB names a store) FLOWRUN_SERVER, else the server the project's
// config.hcl names. --server with --db is refused: a verb reads one place.
func (e *env) chooseServer(flagValue string, dbGiven bool) error {
	switch {
	case flagValue != "" && dbGiven:
		return usageErrorf("--server and --db name two places to read runs from").
			hint("Pass one: --server URL reads through a flowrun serve, --db PATH reads a store.")
	case flagValue != "":
		e.remote.url, e.remote.from = flagValue, "--server"
	case dbGiven || e.getenv("FLOWRUN_DB") != "":
		return nil
	case e.getenv("FLOWRUN_SERVER") != "":
		e.remote.url, e.remote.from = e.getenv("FLOWRUN_SERVER"), "FLOWRUN_SERVER"
	default:
		// The project's config.hcl may name its server (cli.md §6); a
		// config that cannot be read is reported by the store's lookup.
		p, err := project.Find(".")
		if err != nil || p.Server == "" {
			return nil
		}
		e.remote.url, e.remote.from = p.Server, p.Config
	}
	if _, err := api.ParseServerURL(e.remote.url); err != nil {
		return e.serverURLError(err).hint("Give the address flowrun serve listens on, such as --server https://flowrun.internal:8443.")
	}
	return nil
}

// serverURLError words a refused server URL after where it came from. The
// api's error starts with "server", which is dropped after --server and
// FLOWRUN_SERVER so the word is not said twice.
func (e *env) serverURLError(err error) *exitError {
	msg := err.Error()
	if e.remote.from == "--server" || e.remote.from == "FLOWRUN_SERVER" {
		msg = strings.TrimPrefix(msg, "server ")
	}
	return usageErrorf("%s %s", e.remote.from, msg)
}

// door is the verb's one door to runs (package api): a client of the
// server, or the engine over the store. A store that does not exist is
// errNoDatabase, which the verb words (noDatabase).
func (e *env) door(ctx context.Context) (api.Service, error) {
	if e.remote.url != "" {
		if e.remote.client == nil {
			token, err := e.serverToken()
			if err != nil {
				return nil, err
			}
			c, err := api.Dial(e.remote.url, token, api.ClientOptions{UserAgent: "flowrun " + e.verb})
			if err != nil {
				return nil, e.serverURLError(err)
			}
			e.remote.client = c
			e.closers = append(e.closers, c.Close)
		}
		return e.remote.client, nil
	}
	st, err := e.openStore(ctx, false)
	if err != nil {
		return nil, err
	}
	return api.NewLocal(e.engine(st, nil), api.LocalOptions{MaxFileSize: e.workflowFileLimit()}), nil
}

// serverToken is the token for the verb's server: FLOWRUN_TOKEN, else the
// one flowrun login saved for it, else none (a server with --no-auth).
func (e *env) serverToken() (string, error) {
	if t := e.getenv("FLOWRUN_TOKEN"); t != "" {
		return t, nil
	}
	u, err := api.ParseServerURL(e.remote.url)
	if err != nil {
		return "", e.serverURLError(err)
	}
	creds, err := e.credentials()
	if err != nil {
		return "", nil // no config directory: no saved token
	}
	t, err := creds.Token(u.String())
	if err != nil {
		return "", credentialsError(err)
	}
	return t, nil
}

// remoteExit words an error of the server's for the terminal, or is nil
// for another error: exit 5 when the server could not be reached or
// failed, 2 when it refused the request (bad input, no token or too small
// a scope), with how to fix it. msg, when not "", says what was being
// done.
func remoteExit(msg string, err error) *exitError {
	var se *api.ServerError
	var p *api.Problem
	with := func(code int, what string) *exitError {
		if msg != "" && what != "" {
			what = msg + ": " + what
		} else if msg != "" {
			what = msg
		}
		return &exitError{code: code, msg: what, err: err}
	}
	switch {
	case errors.As(err, &se):
		return with(ExitStore, "").hint(fmt.Sprintf("Check that flowrun serve runs at that address and answers (curl %s/healthz), or read the store itself with --db.", strings.TrimSuffix(se.Server, "/")))
	case errors.As(err, &p) && errors.Is(err, api.ErrUnauthorized):
		return with(ExitInvalid, fmt.Sprintf("server %s refused the request", p.Server)).
			hint("Log in with a token of that server (flowrun login URL; its admin creates one with: flowrun tokens create NAME --scope read|write), or set FLOWRUN_TOKEN.")
	case errors.As(err, &p) && errors.Is(err, api.ErrForbidden):
		return with(ExitInvalid, fmt.Sprintf("server %s refused the request", p.Server)).
			hint("Use a token with the scope the message names (flowrun tokens create NAME --scope SCOPE on the server).")
	case errors.As(err, &p) && p.Status >= 500:
		return with(ExitStore, fmt.Sprintf("server %s failed", p.Server))
	}
	return nil
}

// remoteError is remoteExit's error, or err as it is.
func remoteError(err error) error {
	if x := remoteExit("", err); x != nil {
		return x
	}
	return err
}

// withServer adds flag (serverFlag's " --server URL", or "" for nothing)
// to each command of a verb that takes --server in hint (a hint of the
// door's, worded for a caller on the store), so the command it names
// reads the same server and not a store in the caller's directory. A
// command runs to the end of its clause: a ";", ")", ", " or a full stop
// ends it; one that names a server already is left as it is.
func withServer(hint, flag string) string {
	if flag == "" {
		return hint
	}
	var b strings.Builder
	rest := hint
	for {
		i := strings.Index(rest, "flowrun ")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		end := len(rest)
		for _, stop := range []string{";", ")", ", ", ". "} {
			if j := strings.Index(rest, stop); j >= 0 && j < end {
				end = j
			}
		}
		if strings.HasSuffix(rest[:end], ".") {
			end--
		}
		cmd := strings.TrimRight(rest[:end], " ")
		verb, _, _ := strings.Cut(strings.TrimPrefix(cmd, "flowrun "), " ")
		b.WriteString(cmd)
		if c := lookup(verb); c != nil && c.remote && !strings.Contains(cmd, "--server") {
			b.WriteString(flag)
		}
		rest = rest[len(cmd):]
	}
}
