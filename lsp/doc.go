// Package lsp is flowrun's language server: `flowrun lsp` speaks the
// Language Server Protocol over standard input and output, so that an
// editor shows a workflow file's diagnostics as it is typed (the same as
// `flowrun validate`, with ranges), hover (the CEL type of an expression,
// a step's output type, an input's type and default, the documentation of
// a block or attribute), go to definition (steps.X, input.X, secrets.X,
// step.X, breaker.X), completion (block and attribute names, step names,
// output fields, input names, CEL functions), formatting (`flowrun fmt`),
// document symbols (the steps) and, at the version attribute, the bump
// the edit needs against the stored versions. spec/lsp.md lists the
// capabilities and limits.
//
// # Why no LSP library
//
// The server frames JSON-RPC 2.0 itself, on encoding/json, in rpc.go (a
// Content-Length header, a body of bounded size, one message at a time),
// and declares the few protocol types it uses in protocol.go. The
// candidates were looked at in November 2026: go.lsp.dev/protocol's last
// release is v0.12.0 of March 2022 (LSP 3.16, pinned to jsonrpc2 v0.10,
// with zap and segmentio/encoding), and its "LSP 3.17 support" issue is
// still unresolved; github.com/tliron/glsp's last release is v0.2.2 of
// March 2024, its LSP 3.17 pull requests have been open since 2022, and it
// brings sourcegraph/jsonrpc2, commonlog, kutil, gorilla/websocket and
// go-deadlock. terraform-ls, the HCL language server we took as a model,
// takes only the transport from a library (creachadair/jrpc2) and
// generates its own protocol types (internal/protocol); its handlers
// (one file per method) work on a document store and on hcl-lang's
// schema-driven decoder. A server for one file type needs a dozen protocol
// types and a framing of some eighty lines; owning them keeps the
// dependency list as it was and the message size limit in our hands,
// checked before a body is read. The handlers follow terraform-ls's
// shape: one file per concern, working on the open document, with the
// schemas coming from the compiler itself (lang.SchemaOf) rather than a
// copy.
//
// # What it must not do
//
// The server must not write to the database: it opens it as validate
// does, only when it exists and never creating it, and only reads it, to
// compare a workflow with its stored versions. It
// must not start goroutines: Serve reads, handles and answers one message
// at a time on the caller's goroutine. It must not crash on any input: a
// message larger than the limit is skipped unread, a body that is not
// JSON is answered with a parse error, and every handler works on the
// partial syntax tree of a file that does not parse (a panic in a
// handler is still caught and answered as an internal error, as a last
// line of defence, never as the design). It must not import the
// command-line package; lang must not import it.
package lsp
