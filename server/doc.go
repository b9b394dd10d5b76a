// Package server is flowrun's HTTP API (flowrun serve): the routes under
// /v1, bearer-token auth with scopes, per-token rate limits, body limits,
// problem+json errors (RFC 9457), Server-Sent Events of a run's events,
// the health probes and the OpenAPI document. spec/api.md states what it
// promises.
//
// It decodes requests, calls interp.Engine's public API and encodes the
// answers with the encoders the CLI's --json uses (interp.RunView and the
// list forms of interp/listjson.go). It must not hold engine policy (which
// version a start runs, run keys, what a signal, cancel, retry or decision
// may do: interp decides and words the refusal), must not run SQL (it
// reads through the store.Store interface only), must not parse HCL, and
// must not read the wall clock (Options.Clock), and must not put a server
// error's detail (the store's text, which can name the database) in an
// answer: writeError logs it under a request id the answer gives, and a
// failing event stream's error frame does the same (streamFault).
//
// Other packages add routes with Server.Handle, each with the scope it
// needs; the auth test builds its table from Server.Routes and the OpenAPI
// document, so a route cannot be left open by mistake.
package server
