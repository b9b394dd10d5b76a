package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/api"
)

const serverUsage = "read and steer the runs of this flowrun serve (https://HOST:PORT) instead of a store (default $FLOWRUN_SERVER; the token is $FLOWRUN_TOKEN)"

// remoteTarget is where a verb that can go through the API reads and
// steers runs: a server's URL and where it came from, or none (the
// store).
type remoteTarget struct {
	url  string
	from string // "--server" or "FLOWRUN_SERVER"
}

// chooseServer picks the verb's server: --server, else FLOWRUN_SERVER
// unless --db or FLOWRUN_DB names a store. --server with --db is refused:
// a verb reads one place.
func (e *env) chooseServer(flagValue string, dbGiven bool) error {
	switch {
	case flagValue != "" && dbGiven:
		return usageErrorf("--server and --db name two places to read runs from").
			hint("Pass one: --server URL reads through a flowrun serve, --db PATH reads a store.")
	case flagValue != "":
		e.remote = remoteTarget{url: flagValue, from: "--server"}
	case dbGiven || e.getenv("FLOWRUN_DB") != "":
		return nil
	case e.getenv("FLOWRUN_SERVER") != "":
		e.remote = remoteTarget{url: e.getenv("FLOWRUN_SERVER"), from: "FLOWRUN_SERVER"}
	default:
		return nil
	}
	if _, err := api.ParseServerURL(e.remote.url); err != nil {
		return usageErrorf("%s %v", e.remote.from, err).hint("Give the address flowrun serve listens on, such as --server https://flowrun.internal:8443.")
	}
	return nil
}

// door is the verb's one door to runs (package api): a client of the
// server, or the engine over the store. A store that does not exist is
// errNoDatabase, which the verb words (noDatabase).
func (e *env) door(ctx context.Context) (api.Service, error) {
	if e.remote.url != "" {
		if e.client == nil {
			c, err := api.Dial(e.remote.url, e.getenv("FLOWRUN_TOKEN"), api.ClientOptions{UserAgent: "flowrun " + e.verb})
			if err != nil {
				return nil, usageErrorf("%s %v", e.remote.from, err)
			}
			e.client = c
			e.closers = append(e.closers, c.Close)
		}
		return e.client, nil
	}
	st, err := e.openStore(ctx, false)
	if err != nil {
		return nil, err
	}
	return api.NewLocal(e.engine(st, nil)), nil
}

// remoteError words an error of the server's for the terminal: exit 5
// when the server could not be reached or failed, 2 when it refused the
// request (bad input, no token or too small a scope), with how to fix it.
func remoteError(err error) error {
	var se *api.ServerError
	var p *api.Problem
	switch {
	case errors.As(err, &se):
		return (&exitError{code: ExitStore, err: err}).hint("Check that flowrun serve runs at that address and answers (curl URL/healthz), or read the store itself with --db.")
	case errors.As(err, &p) && errors.Is(err, api.ErrUnauthorized):
		return (&exitError{code: ExitInvalid, msg: fmt.Sprintf("server %s refused the request", p.Server), err: err}).
			hint("Set FLOWRUN_TOKEN to a token of that server (its admin creates one with: flowrun tokens create NAME --scope read|write).")
	case errors.As(err, &p) && errors.Is(err, api.ErrForbidden):
		return (&exitError{code: ExitInvalid, msg: fmt.Sprintf("server %s refused the request", p.Server), err: err}).
			hint("Use a token with the scope the message names (flowrun tokens create NAME --scope SCOPE on the server).")
	case errors.As(err, &p) && p.Status >= 500:
		return &exitError{code: ExitStore, msg: fmt.Sprintf("server %s failed", p.Server), err: err}
	}
	return err
}
