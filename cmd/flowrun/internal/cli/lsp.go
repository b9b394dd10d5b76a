package cli

import (
	"context"
	"errors"
	"flag"
	"time"

	"github.com/flowrun/flowrun/docfetch"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lsp"
)

func lspCommand() *command {
	return &command{
		name:  "lsp",
		args:  "",
		short: "run the language server for editors, over standard input and output",
		long: `Lsp runs a Language Server Protocol server on standard input and output for
an editor: diagnostics as you type (those of validate), hover, go to
definition, completion, formatting (those of fmt), document symbols, and at
the version attribute the bump the edit needs against the stored versions.
It reads the database only when it exists, and never writes it. It exits 0
after the editor's shutdown and exit, 1 when the session ends without a
shutdown. spec/lsp.md lists the capabilities and limits.`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usageErrorf("lsp takes no arguments, got %q", args[0]).
						hint("Start it as flowrun lsp from the editor's language server settings (README.md).")
				}
				err := lsp.Serve(ctx, e.stdin, e.stdout, lsp.Options{
					Engine:      e.lspEngine,
					Database:    e.dsn,
					MaxFileSize: e.workflowFileLimit(),
					// The server compiles at every edit: a URL's
					// document is fetched again at most once a
					// minute, and a server that does not answer
					// holds the editor up for a few seconds only.
					FetchDocument: docfetch.NewCache(docfetch.New(ctx, docfetch.Options{Timeout: lspFetchTimeout}), e.clock, lspFetchTTL).Fetch,
				})
				if err != nil && ctx.Err() == nil {
					// The session ended abnormally: exit 1, as the
					// protocol asks of an exit without shutdown.
					return &exitError{code: ExitFailed, msg: err.Error()}
				}
				return err
			}
		},
	}
}

// The language server's fetches of OpenAPI documents named by URL: each
// bounded by lspFetchTimeout, each answer kept lspFetchTTL.
const (
	lspFetchTimeout = 3 * time.Second
	lspFetchTTL     = time.Minute
)

// lspEngine is the server's engine over the database, nil when there is
// none yet (it is looked for again on the next compile).
func (e *env) lspEngine(ctx context.Context) (*interp.Engine, error) {
	st, err := e.openStore(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return e.engine(st, nil), nil
}
