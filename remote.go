package flowrun

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
)

// Server is a flowrun serve that a Go program starts and follows runs on,
// over its HTTP API (spec/api.md), with the token it was given: what Flow
// does on a database, done by the server and its workers. It is safe for
// concurrent use. Close it when done.
type Server struct {
	c *api.Client
}

// DialOptions are the settings of DialWith; the zero value is Dial's.
type DialOptions = api.ClientOptions

// Dial returns a client of the flowrun serve at url (https://HOST:PORT, or
// http:// to a loopback address) that sends token (from flowrun tokens
// create on the server; "" for a server started with --no-auth). It checks
// the URL only; the first call meets the server.
func Dial(url, token string) (*Server, error) { return DialWith(url, token, DialOptions{}) }

// DialWith is Dial with options (the HTTP client, timeouts, limits).
func DialWith(url, token string, o DialOptions) (*Server, error) {
	c, err := api.Dial(url, token, o)
	if err != nil {
		return nil, fmt.Errorf("flowrun: %w", err)
	}
	return &Server{c: c}, nil
}

// Close releases the client's idle connections.
func (s *Server) Close() error { return s.c.Close() }

func runOfView(v *interp.RunView) Run {
	r := Run{ID: v.RunID, Workflow: v.Workflow, Version: v.Version, Key: v.Key, Status: Status(v.Status),
		WaitReason: v.WaitReason}
	if len(v.Outputs) > 0 && string(v.Outputs) != "null" {
		r.Outputs = v.Outputs
	}
	if len(v.Error) > 0 && string(v.Error) != "null" {
		r.Error = v.Error
	}
	return r
}

// Start starts a run of the newest stored version of workflow on the
// server, or returns the run its key names (language §2); the server's
// workers run it.
func (s *Server) Start(ctx context.Context, workflow string, inputs map[string]any) (Run, error) {
	return s.StartWith(ctx, workflow, inputs, StartOptions{})
}

// StartWith is Start with options; Dir is refused: a run on a server
// executes in the directory its version was applied with.
func (s *Server) StartWith(ctx context.Context, workflow string, inputs map[string]any, o StartOptions) (Run, error) {
	if o.Dir != "" {
		return Run{}, fmt.Errorf("flowrun: StartOptions.Dir does not apply to a server: its runs execute where their version was applied")
	}
	v, _, err := s.c.Start(ctx, api.StartRequest{Workflow: workflow, Inputs: inputs, Version: o.Version, New: o.New})
	if err != nil {
		return Run{}, fmt.Errorf("flowrun: %w", err)
	}
	return runOfView(v), nil
}

// Get returns a run by id, unique id prefix or reference (@last,
// WORKFLOW@last, WORKFLOW/KEY).
func (s *Server) Get(ctx context.Context, ref string) (Run, error) {
	v, err := s.c.Run(ctx, ref)
	if err != nil {
		return Run{}, fmt.Errorf("flowrun: %w", err)
	}
	return runOfView(v), nil
}

// Signal sends the signal name, with payload encoded as JSON (nil for
// none), to a run.
func (s *Server) Signal(ctx context.Context, runID, name string, payload any) error {
	var raw json.RawMessage
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return fmt.Errorf("flowrun: signal %s: encode the payload: %w", name, err)
		}
		raw = b
	}
	if _, err := s.c.Signal(ctx, runID, name, raw); err != nil {
		return fmt.Errorf("flowrun: %w", err)
	}
	return nil
}

// Cancel cancels a run and its child runs.
func (s *Server) Cancel(ctx context.Context, runID string) (Run, error) {
	v, err := s.c.Cancel(ctx, runID)
	if err != nil {
		return Run{}, fmt.Errorf("flowrun: %w", err)
	}
	return runOfView(v), nil
}

// Wait follows the run's log on the server until the run has ended (or
// ctx ends) and returns it as it is then. It does not run anything: the
// server's workers do.
func (s *Server) Wait(ctx context.Context, runID string) (Run, error) {
	if err := s.c.Log(ctx, runID, api.LogQuery{Follow: true}, func(api.LogEntry) error { return nil }); err != nil {
		return Run{}, fmt.Errorf("flowrun: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return Run{}, err
	}
	return s.Get(ctx, runID)
}
