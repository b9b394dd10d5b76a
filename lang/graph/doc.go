// Package graph owns the graph IR of a compiled workflow: its types (Graph,
// Step, Action, Value, Type, ...), its canonical encoding and decoding
// (Encode, Decode, Seal), its hash, its validation (ValidateGraph), the
// version diff and bump classification (Diff, CheckBump), migration plans
// and the renderings of a graph (Mermaid, DOT).
//
// graph must not import the front end (package lang) nor the CEL layer
// (lang/expr): it knows expressions only as their text and their static
// type. It must not do I/O, and must not keep a goroutine running past the
// call that started it (a large graph is decoded and sealed by several
// goroutines, each waited for before the call returns).
//
// # The fields of the IR
//
// The struct types of the IR (Graph, Step, Action and its kinds, Retry,
// Foreach, Until, Input, Output, Alert, Schedule, Webhook, Expr, Value,
// Template, ...) are the one description of their fields. Each carries a
// //graph:gen directive in its doc comment (how it is allocated, how Diff
// compares it: field by field, as parts of one change, or whole), and each
// field a json tag, its key in the encoding, and a graph tag: how Diff
// compares it (diff=), the scope of the expressions it holds (slot=), for a
// step whether the step's hash covers it (def) or it is run policy (run);
// see package lang/graph/internal/irgen for the grammar. ir_gen.go is
// generated from them: the decoder of each struct of a stored graph, its
// encoder (appendJSON: the bytes encoding/json writes without HTML
// escaping, which TestEncodeFastMatchesEncodingJSON and FuzzEncodeFast
// hold it to; the step hash encodes a step's def fields by appendDefJSON),
// the walks that put it in normal form and intern its types and mode
// strings, the comparison of two versions of it, the walk that hands every
// expression to expr.Load with its scope (WalkExprs), and the hash's view
// of a step (stepDef). TestIRGenUpToDate fails when ir_gen.go is stale, and
// TestEveryFieldGenerated when a field of any of them is missing from its
// decoder, its comparison or the expression walk.
//
// Two types are written by hand, as their encoding is not field by field:
// Type (each distinct type is parsed once and shared) and NamedValues (a
// list encoded as an object keyed by name).
//
// To add a field to any of the generated types:
//
//  1. declare it in its struct with its json and graph tags, and run go
//     generate ./lang/graph;
//  2. have the front end (package lang) set it;
//  3. if some values of it are not valid, say so in encode_validate.go
//     (a field holding a value, an expression or a type always has: its
//     form is checked there, and TestValidateReachesEveryValue fails when
//     the validator's walk does not reach it).
//
// The codec, the normal form, the interning, the hash, the diff and
// expr.Load's walk then know it (TestAddFieldTouchesOnePlace adds fields
// of several kinds and builds the package); what remains is the code that
// gives the field its meaning, such as the engine acting on it.
//
// Where the diff= grammar cannot say how a field is compared, its spec
// names a hand-written comparison (fn:, whole:), which step 1 then writes
// next to the others in diff.go. A field of a new struct type gives that
// type a //graph:gen directive, and it is generated too; a field of a Go
// type the generator does not know (irgen's table of field types) needs
// that type's decoder in decode_fast.go first.
//
// A field in the encoding changes the graph hash of every workflow that
// sets it (a def field of a step also the step's hash; the golden file
// spec/golden/graph_hashes.txt pins them): leave it out of the encoding
// when it holds its zero value (omitempty), so that the graphs stored
// before it keep their hashes.
package graph

//go:generate go run ./internal/irgen/cmd
