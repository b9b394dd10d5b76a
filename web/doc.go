// Package web is the web dashboard of flowrun serve: pages that show
// every run live, its graph, steps, output and history, and the actions
// of the CLI and flowtui (cancel, retry, signal, the version decision,
// dead letters, schedules), for people who have a browser but no shell
// beside the store.
//
// The pages are rendered on the server with html/template, which escapes
// every value: what a workflow, an input or a step's output holds is text
// on the page, never markup or script. A small script of our own
// (assets/app.js, no third-party code) shows times in the browser's zone
// and keeps a page live: it waits on the server for the store's next
// event (api.Records.WaitEvents) and redraws what changed. Everything is
// embedded in the binary, so `go install` needs Go alone, and no page
// fetches anything from another origin. This is the approach of the Go
// projects whose UI ships in their one binary without a front-end build:
// the server owns the data and its rendering, the browser only displays.
//
// Everything goes through the one door (api.Service): web reads and acts
// exactly as the CLI and flowtui do, with the same refusals. A session
// (sign-in with a token) holds the token's name and scope; an action needs
// the scope its API route needs, and every form carries the session's
// CSRF token. web must not open a store, run a workflow, or write any
// value into a page outside html/template.
package web
