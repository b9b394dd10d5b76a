// Package lang is the HCL front end of the flowrun language and its entry
// point: LoadPaths and LoadFile read .hcl files, parse them, decode the
// blocks with their source ranges, check them, and compile each workflow to
// a graph.Graph; WriteDiagnostics renders the diagnostics with source
// lines, and Format formats a file.
//
// The graph IR (its codec, hash, diff and version rules) is package
// lang/graph; the CEL layer (environment, types, templates, cost and
// evaluation) is package lang/expr. lang uses both; neither may import lang.
//
// lang must not do I/O beyond reading the files it is given and the OpenAPI
// documents their openapi actions name inside each workflow file's
// directory (openapi_doc.go); it opens no network connection: a document
// named by URL comes through the fetcher the caller gives the load
// (LoadOptions.FetchDocument, package docfetch). It must not keep a
// goroutine running past the call that started it (a large file is decoded
// and compiled by several goroutines at once, each waited for before the
// call returns), and must not import interp or store.
package lang
