package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/credentials"
	"github.com/flowrun/flowrun/project"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/feed"
)

// chooseServer picks the server as flowrun's verbs do (spec/cli.md §9):
// --server, else (unless --db or FLOWRUN_DB names a store) FLOWRUN_SERVER,
// else the server of the project's config.hcl; "" for none (the store).
// --server with --db is refused: flowtui shows one place.
func chooseServer(flagValue string, dbGiven bool, getenv func(string) string) (url, from string, err error) {
	switch {
	case flagValue != "" && dbGiven:
		return "", "", errors.New("--server and --db (or FLOWRUN_DB) name two places to show runs from; pass one: --server URL shows a flowrun serve's runs, --db PATH a database's")
	case flagValue != "":
		url, from = flagValue, "--server"
	case dbGiven:
		return "", "", nil
	case getenv("FLOWRUN_SERVER") != "":
		url, from = getenv("FLOWRUN_SERVER"), "FLOWRUN_SERVER"
	default:
		p, err := project.Find(".")
		if err != nil || p.Server == "" {
			return "", "", nil // a config that cannot be read is reported by the store's lookup
		}
		url, from = p.Server, p.Config
	}
	if _, err := api.ParseServerURL(url); err != nil {
		return "", "", fmt.Errorf("%s. Give the address flowrun serve listens on, such as --server https://flowrun.internal:8443", fromServer(from, err))
	}
	return url, from, nil
}

// fromServer words an error of the server URL after where the URL came
// from. The api's error starts with "server", which is dropped after
// --server and FLOWRUN_SERVER so the word is not said twice, as flowrun
// words it.
func fromServer(from string, err error) string {
	msg := err.Error()
	if from == "--server" || from == "FLOWRUN_SERVER" {
		msg = strings.TrimPrefix(msg, "server ")
	}
	return from + " " + msg
}

// serverToken is the token for a server: FLOWRUN_TOKEN, else the one
// flowrun login saved for it, else none (a server with --no-auth).
func serverToken(server string, getenv func(string) string) (string, error) {
	if t := getenv("FLOWRUN_TOKEN"); t != "" {
		return t, nil
	}
	dir, ok := credentials.Dir(getenv("XDG_CONFIG_HOME"), getenv("HOME"))
	if !ok {
		return "", nil
	}
	u, err := api.ParseServerURL(server)
	if err != nil {
		return "", err
	}
	t, err := credentials.In(dir).Token(u.String())
	if errors.Is(err, credentials.ErrOpenToOthers) {
		return "", fmt.Errorf("%v; make it private with: chmod 600 %s", err, credentials.In(dir).Path)
	}
	return t, err
}

// runRemote shows the runs of a flowrun serve: every read goes through
// its records (api.Records) and every action through its API, with the
// token's scope. The server is asked once before the screen opens, so a
// server that is down or a token it refuses is a clear message on the
// terminal, not a broken screen.
func runRemote(server, from, by string, mouse bool, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	token, err := serverToken(server, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "flowtui: the credentials of %s: %v\n", server, err)
		return exitUsage
	}
	c, err := api.Dial(server, token, api.ClientOptions{UserAgent: "flowtui"})
	if err != nil {
		fmt.Fprintf(stderr, "flowtui: %s\n", fromServer(from, err))
		return exitUsage
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.EventList(ctx, store.EventListParams{Limit: 1}); err != nil {
		var p *api.Problem
		switch {
		case errors.As(err, &p) && (p.Status == http.StatusUnauthorized || p.Status == http.StatusForbidden):
			fmt.Fprintf(stderr, "flowtui: %s refused: %v. Pass a token with scope read or more in FLOWRUN_TOKEN, or save one with: flowrun login %s\n", server, err, server)
			return exitUsage
		default:
			fmt.Fprintf(stderr, "flowtui: cannot read the runs of %s: %v\n", server, err)
			return exitStore
		}
	}
	return show(ctx, cancel, &feed.Source{Door: c, By: by}, c.Server(), mouse, getenv, stdin, stdout, stderr)
}
