package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"sort"
	"unicode/utf8"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Options configure Serve.
type Options struct {
	// Engine returns the engine over the database, or nil when there is
	// no database. It is called whenever a document is compiled, so a
	// database created while the server runs is found; it must open the
	// database only when it exists, never create it, and the server only
	// reads through it.
	Engine func(ctx context.Context) (*interp.Engine, error)
	// Database names the database in messages (the DSN).
	Database string
	// MaxMessage is the largest message body read; 0 means
	// DefaultMaxMessage. A larger message is skipped.
	MaxMessage int64
	// MaxFileSize is the largest document compiled; 0 means
	// lang.DefaultMaxWorkflowFile, as for the other verbs.
	MaxFileSize int64
	// Version is the server's version for the client.
	Version string
	// FetchDocument fetches the OpenAPI documents openapi actions name
	// by URL, for diagnostics and operationId completion; nil: such a
	// document is an error. The server compiles at every edit, so it
	// should answer from a cache (docfetch.Cache) and give up quickly.
	FetchDocument lang.DocumentFetcher
}

// ErrNoShutdown is Serve's error when the input ended or exit came before
// a shutdown request; the protocol asks for exit code 1 then.
var ErrNoShutdown = errors.New("the client ended the session without a shutdown request")

// server is one session's state. It is used by one goroutine only.
type server struct {
	opts        Options
	out         io.Writer
	docs        map[string]*document
	initialized bool
	shutdown    bool
	funcs       []expr.Function
	// documents keeps the OpenAPI documents the files name across
	// compiles (made by initialize).
	documents *lang.DocumentCache
	// storeErr is the last failure to open the database (engine).
	storeErr error
	// stale holds what an edit made out of date and flush has not
	// compiled again yet: folders (a document's directory) and the URIs
	// of documents compiled alone.
	stale map[string]bool
	// compiles counts the compiles flush ran (tests read it).
	compiles int
}

// document is an open file and what the server knows of it.
type document struct {
	uri     string
	path    string // the file name in diagnostics
	version int
	text    *text
	// body is the syntax tree, partial when the file does not parse; nil
	// when the file is over the size limit, which no request reads then.
	body *hclsyntax.Body
	mod  *lang.Module
	// diags are the diagnostics of the last compile, store checks
	// included.
	diags hcl.Diagnostics
	// good keeps, per workflow, the last graph that compiled, so that
	// hover and completion know the types while an edit is half done.
	good map[string]*graph.Graph
}

// Serve runs a language server session: it reads messages from in and
// writes answers and notifications to out, one at a time, until the
// client sends exit (nil after a shutdown request, ErrNoShutdown before
// one), the input ends (ErrNoShutdown), or ctx is done (checked between
// messages). An error writing out ends the session with that error.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = lang.DefaultMaxWorkflowFile
	}
	s := &server{opts: opts, out: out, docs: map[string]*document{}}
	return s.serve(ctx, in)
}

// serve is Serve's loop over the messages of in.
func (s *server) serve(ctx context.Context, in io.Reader) error {
	r := bufio.NewReaderSize(in, 64<<10)
	// An edit is compiled when the client has nothing more to say: while
	// messages wait in the buffer (an editor opening a folder sends a
	// burst of didOpen), the folders they touch are only marked stale, so
	// a burst costs one compile of each folder instead of one per message
	// and per open document. A request compiles what is stale first.
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		body, err := readMessage(r, s.opts.MaxMessage)
		var big *errTooLarge
		switch {
		case errors.As(err, &big):
			if werr := s.logMessage(1, "flowrun lsp: "+big.Error()+"."); werr != nil {
				return werr
			}
			continue
		case errors.Is(err, io.EOF):
			return ErrNoShutdown
		case err != nil:
			return err
		}
		exit, err := s.handle(ctx, body)
		if err != nil {
			return err
		}
		if !exit && r.Buffered() == 0 {
			if err := s.flush(ctx); err != nil {
				return err
			}
		}
		if exit {
			if s.shutdown {
				return nil
			}
			return ErrNoShutdown
		}
	}
}

// handle answers one message body; exit reports an exit notification.
func (s *server) handle(ctx context.Context, body []byte) (exit bool, err error) {
	var m message
	if jerr := json.Unmarshal(body, &m); jerr != nil {
		return false, s.write(&message{ID: json.RawMessage("null"), Error: errorf(codeParseError, "the message is not JSON: %v", jerr)})
	}
	request := len(m.ID) > 0 && string(m.ID) != "null"
	if request && !validID(m.ID) {
		return false, s.write(&message{ID: json.RawMessage("null"), Error: errorf(codeInvalidRequest, "the request id must be a number or a string (of UTF-8 text)")})
	}
	if m.Method == "" {
		if request && m.Result == nil && m.Error == nil {
			return false, s.write(&message{ID: m.ID, Error: errorf(codeInvalidRequest, "the request has no method")})
		}
		return false, nil // a response to a request the server never sends
	}
	if m.Method == "exit" {
		return true, nil
	}
	result, rerr := s.call(ctx, &m)
	if !request {
		if rerr != nil && s.initialized {
			// A notification has no answer: tell the user in the log.
			return false, s.logMessage(2, "flowrun lsp: "+m.Method+": "+rerr.Error())
		}
		return false, nil
	}
	reply := &message{ID: m.ID}
	if rerr != nil {
		var re *rpcError
		if !errors.As(rerr, &re) {
			re = errorf(codeRequestFailed, "%v", rerr)
		}
		reply.Error = re
	} else {
		raw, merr := json.Marshal(result)
		if merr != nil {
			reply.Error = errorf(codeInternalError, "encoding the result: %v", merr)
		} else {
			reply.Result = raw
		}
	}
	return false, s.write(reply)
}

// validID reports whether id is a JSON-RPC request id the server can
// echo: a number or a string, in UTF-8 (the protocol's content is UTF-8;
// encoding/json reads other bytes as U+FFFD, so a client would never
// match an answer echoing them to its request).
func validID(id json.RawMessage) bool {
	if !utf8.Valid(id) {
		return false
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case float64, string:
		return true
	}
	return false
}

// call runs the handler of m. A panic is answered as an internal error:
// the handlers are written for partial trees and should never panic, but
// one bad file must not end the editor's session.
func (s *server) call(ctx context.Context, m *message) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, errorf(codeInternalError, "flowrun lsp: internal error in %s: %v\n%s", m.Method, p, debug.Stack())
		}
	}()
	switch {
	case m.Method == "initialize":
		return s.initialize()
	case !s.initialized:
		return nil, errorf(codeNotInitialized, "the server is not initialized: send initialize first")
	case s.shutdown:
		return nil, errorf(codeInvalidRequest, "the server is shut down: only exit is accepted")
	}
	if request := len(m.ID) > 0 && string(m.ID) != "null"; request && m.Method != "shutdown" {
		if err := s.flush(ctx); err != nil {
			return nil, err
		}
	}
	switch m.Method {
	case "initialized", "$/cancelRequest", "$/setTrace", "workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles":
		return nil, nil
	case "textDocument/didSave":
		s.storeErr = nil // try the database again
		return nil, nil
	case "shutdown":
		s.shutdown = true
		return nil, nil
	case "textDocument/didOpen":
		var p didOpenParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		return nil, s.open(p)
	case "textDocument/didChange":
		var p didChangeParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		return nil, s.change(p)
	case "textDocument/didClose":
		var p didCloseParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		if d := s.docs[p.TextDocument.URI]; d != nil {
			delete(s.docs, d.uri)
			delete(s.stale, d.uri)
			if filepath.IsAbs(d.path) {
				s.markStale(filepath.Dir(d.path)) // the others now see the saved file
			}
		}
		return nil, s.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: p.TextDocument.URI, Diagnostics: []Diagnostic{}})
	case "textDocument/hover":
		d, off, err := s.at(m)
		if err != nil {
			return nil, err
		}
		return s.hover(ctx, d, off), nil
	case "textDocument/completion":
		d, off, err := s.at(m)
		if err != nil {
			return nil, err
		}
		return s.complete(d, off), nil
	case "textDocument/definition":
		d, off, err := s.at(m)
		if err != nil {
			return nil, err
		}
		return definition(d, off), nil
	case "textDocument/formatting":
		d, err := s.doc(m)
		if err != nil {
			return nil, err
		}
		return format(d)
	case "textDocument/documentSymbol":
		d, err := s.doc(m)
		if err != nil {
			return nil, err
		}
		return symbols(d), nil
	}
	return nil, errorf(codeMethodNotFound, "flowrun lsp does not implement %s", m.Method)
}

func params(m *message, v any) error {
	if len(m.Params) == 0 {
		return errorf(codeInvalidParams, "%s needs params", m.Method)
	}
	if err := json.Unmarshal(m.Params, v); err != nil {
		return errorf(codeInvalidParams, "the params of %s do not fit: %v", m.Method, err)
	}
	return nil
}

// doc returns the open document a request names.
func (s *server) doc(m *message) (*document, error) {
	var p documentParams
	if err := params(m, &p); err != nil {
		return nil, err
	}
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		return nil, errorf(codeInvalidParams, "the document %s is not open: send textDocument/didOpen first", p.TextDocument.URI)
	}
	return d, nil
}

// at returns the open document and byte offset a position request names.
func (s *server) at(m *message) (*document, int, error) {
	var p positionParams
	if err := params(m, &p); err != nil {
		return nil, 0, err
	}
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		return nil, 0, errorf(codeInvalidParams, "the document %s is not open: send textDocument/didOpen first", p.TextDocument.URI)
	}
	return d, d.text.offset(p.Position), nil
}

func (s *server) initialize() (any, error) {
	if s.initialized {
		return nil, errorf(codeInvalidRequest, "initialize was already sent")
	}
	s.initialized = true
	s.documents = lang.NewDocumentCache()
	funcs, err := expr.Functions()
	if err != nil {
		return nil, errorf(codeInternalError, "loading the CEL functions: %v", err)
	}
	s.funcs = funcs
	var r initializeResult
	r.ServerInfo.Name = "flowrun"
	r.ServerInfo.Version = s.opts.Version
	r.Capabilities.PositionEncoding = "utf-16"
	r.Capabilities.TextDocumentSync = json.RawMessage(`{"openClose":true,"change":1}`)
	r.Capabilities.HoverProvider = true
	r.Capabilities.DefinitionProvider = true
	r.Capabilities.DocumentFormattingProvider = true
	r.Capabilities.DocumentSymbolProvider = true
	r.Capabilities.CompletionProvider.TriggerCharacters = []string{"."}
	return r, nil
}

func (s *server) open(p didOpenParams) error {
	d := &document{uri: p.TextDocument.URI, path: pathOf(p.TextDocument.URI), version: p.TextDocument.Version,
		good: map[string]*graph.Graph{}}
	s.docs[d.uri] = d
	s.edited(d, []byte(p.TextDocument.Text))
	return nil
}

// edited gives d its new text and marks what must be compiled again: d's
// folder, whose other open documents are compiled with it and may see it
// differently now, or d alone.
func (s *server) edited(d *document, src []byte) {
	d.text = newText(src)
	d.body = nil
	if int64(len(src)) <= s.opts.MaxFileSize {
		d.body, _ = lang.ParseSyntax(d.path, src)
	}
	if filepath.IsAbs(d.path) {
		s.markStale(filepath.Dir(d.path))
	} else {
		s.markStale(d.uri)
	}
}

func (s *server) markStale(key string) {
	if s.stale == nil {
		s.stale = map[string]bool{}
	}
	s.stale[key] = true
}

// flush compiles what is stale and publishes the diagnostics: each stale
// folder once, with all its open documents, and each document compiled
// alone. A panic is reported in the log, as a notification's would be:
// one bad file must not end the editor's session.
func (s *server) flush(ctx context.Context) (err error) {
	if len(s.stale) == 0 {
		return nil
	}
	keys := make([]string, 0, len(s.stale))
	for k := range s.stale {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s.stale = nil
	defer func() {
		if p := recover(); p != nil {
			err = s.logMessage(1, fmt.Sprintf("flowrun lsp: internal error compiling: %v\n%s", p, debug.Stack()))
		}
	}()
	for _, k := range keys {
		if d := s.docs[k]; d != nil && !filepath.IsAbs(d.path) {
			if err := s.analyze(ctx, d, nil); err != nil {
				return err
			}
			continue
		}
		if err := s.analyzeFolder(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// analyzeFolder compiles the open workflow documents of dir together with
// its saved files, once, and analyzes each open document of dir with the
// result; a test file is checked against the folder's workflows.
func (s *server) analyzeFolder(ctx context.Context, dir string) error {
	var docs []*document
	for _, o := range s.docs {
		if filepath.IsAbs(o.path) && filepath.Dir(o.path) == dir {
			docs = append(docs, o)
		}
	}
	if len(docs) == 0 {
		return nil
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].path < docs[j].path })
	var shared *folderCompile
	for _, d := range docs {
		if !lang.IsTestFile(d.path) && int64(len(d.text.src)) <= s.opts.MaxFileSize && shared == nil {
			shared = s.compileFolder(ctx, d)
		}
		if err := s.analyze(ctx, d, shared); err != nil {
			return err
		}
	}
	return nil
}

func (s *server) change(p didChangeParams) error {
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		return errorf(codeInvalidParams, "the document %s is not open: send textDocument/didOpen first", p.TextDocument.URI)
	}
	src := d.text.src
	for _, c := range p.ContentChanges {
		if c.Range == nil {
			src = []byte(c.Text)
			continue
		}
		t := newText(src)
		start, end := t.offset(c.Range.Start), t.offset(c.Range.End)
		if end < start {
			start, end = end, start
		}
		next := make([]byte, 0, len(src)-(end-start)+len(c.Text))
		next = append(append(append(next, src[:start]...), c.Text...), src[end:]...)
		src = next
	}
	d.version = p.TextDocument.Version
	s.edited(d, src)
	return nil
}

// pathOf is the file name of a document URI: the path of a file: URI,
// else the URI itself.
func pathOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return uri
	}
	return u.Path
}

// folderCompile is one compile of a folder's workflow files (sources),
// shared by the open documents of the folder.
type folderCompile struct {
	mod      *lang.Module
	diags    hcl.Diagnostics
	eng      *interp.Engine
	storeErr error
}

// compileFolder compiles d's folder as `flowrun validate DIR` compiles
// it (sources: a child workflow is found in the folder's files, then in
// the database when it exists).
func (s *server) compileFolder(ctx context.Context, d *document) *folderCompile {
	s.compiles++
	c := &folderCompile{}
	c.eng, c.storeErr = s.engine(ctx)
	opts := s.loadOptions()
	if c.eng != nil {
		opts.Stored = func(name string) ([]*graph.Graph, error) {
			gs, err := c.eng.StoredGraphs(ctx, name)
			if err != nil && c.storeErr == nil {
				c.storeErr = err
			}
			return gs, err
		}
	}
	c.mod, c.diags = lang.LoadSources(s.sources(d, true), opts)
	return c
}

// loadOptions are the settings of every compile: the file limit, the
// OpenAPI documents kept across compiles and the fetcher of those named
// by URL.
func (s *server) loadOptions() lang.LoadOptions {
	return lang.LoadOptions{MaxFileSize: s.opts.MaxFileSize, Documents: s.documents, FetchDocument: s.opts.FetchDocument}
}

// analyze sets d's diagnostics from the compile of its folder (shared; d
// is compiled alone when nil), each of d's workflows having its version
// checked against its stored versions, and publishes them. A test file
// (*.test.hcl) is parsed and checked against the folder's workflows, as
// `flowrun test` checks it.
func (s *server) analyze(ctx context.Context, d *document, shared *folderCompile) error {
	d.mod, d.diags = nil, nil
	if int64(len(d.text.src)) > s.opts.MaxFileSize {
		d.diags = hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "File too large",
			Detail: fmt.Sprintf("The file is larger than %s, the most flowrun reads of a workflow file; it is not compiled. Split the workflows into several files, or raise the limit with flowrun lsp --max-file-size.",
				lang.SizeText(s.opts.MaxFileSize)),
		}}
		return s.publish(d)
	}
	if lang.IsTestFile(d.path) {
		s.compiles++
		d.diags = s.checkTestFile(d, s.loadOptions())
		return s.publish(d)
	}
	c := shared
	if c == nil || !c.has(d.path) {
		c = s.compileFolder(ctx, d)
	}
	d.mod = c.mod
	d.diags = own(d, c.diags)
	if needsSalvage(d, d.mod) {
		s.salvage(d, d.diags, s.loadOptions())
	}
	storeErr := c.storeErr
	for _, w := range d.mod.Workflows {
		if w.Graph == nil || w.File != d.path {
			continue
		}
		d.good[w.Name] = w.Graph
		if c.eng == nil {
			continue
		}
		v, err := c.eng.CheckVersion(ctx, interp.CheckVersionParams{Graph: w.Graph})
		if err != nil {
			if storeErr == nil {
				storeErr = err
			}
			continue
		}
		var be *graph.BumpError
		if errors.As(v.Refused, &be) {
			d.diags = append(d.diags, w.BumpDiagnostic(be))
		} else if v.Refused != nil {
			rng := w.VersionRange()
			d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Version refused",
				Detail: v.Refused.Error() + " Fix the workflow's version.", Subject: &rng})
		}
	}
	if storeErr != nil {
		d.diags = append(d.diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Cannot read the database",
			Detail: fmt.Sprintf("Reading %s failed: %v. The workflow is checked without its stored versions until the database can be read; it is tried again when a file is saved.",
				s.opts.Database, storeErr),
		})
	}
	return s.publish(d)
}

// has reports whether the compile read the file name.
func (c *folderCompile) has(name string) bool {
	_, ok := c.mod.Files[name]
	return ok
}

// engine returns the engine over the database, nil when there is none.
// A database that fails to open is not tried again on every keystroke (a
// Postgres server that is down could hold each one for its connect
// timeout): the error stands until a document is saved.
func (s *server) engine(ctx context.Context) (*interp.Engine, error) {
	if s.opts.Engine == nil {
		return nil, nil
	}
	if s.storeErr != nil {
		return nil, s.storeErr
	}
	eng, err := s.opts.Engine(ctx)
	s.storeErr = err
	return eng, err
}

func (s *server) publish(d *document) error {
	out := make([]Diagnostic, 0, len(d.diags))
	for _, h := range d.diags {
		diag := Diagnostic{Severity: severityError, Source: "flowrun", Message: h.Summary}
		if h.Severity == hcl.DiagWarning {
			diag.Severity = severityWarning
		}
		if h.Detail != "" {
			diag.Message += "\n" + h.Detail
		}
		if h.Subject != nil {
			diag.Range = d.text.rangeOf(h.Subject.Start.Byte, h.Subject.End.Byte)
		}
		out = append(out, diag)
	}
	v := d.version
	return s.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: d.uri, Version: &v, Diagnostics: out})
}

func (s *server) notify(method string, p any) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", method, err)
	}
	return s.write(&message{Method: method, Params: raw})
}

// logMessage sends window/logMessage (1 error, 2 warning, 3 info).
func (s *server) logMessage(kind int, msg string) error {
	return s.notify("window/logMessage", logMessageParams{Type: kind, Message: msg})
}

func (s *server) write(m *message) error { return writeMessage(s.out, m) }

// graphOf returns the graph of the workflow named name in d: the current
// one when the workflow compiles, else the last that did (nil if none).
func (d *document) graphOf(name string) *graph.Graph {
	if d.mod != nil {
		if w := d.mod.Workflow(name); w != nil && w.Graph != nil {
			return w.Graph
		}
	}
	return d.good[name]
}
