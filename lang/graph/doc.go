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
// # A step's fields
//
// The Step struct in graph.go is the one description of a step's fields:
// its json tag is its key in the encoding, and its graph tag says whether
// the step's hash covers it (def), or it is run policy (run), and how Diff
// compares two versions of it (see package lang/graph/internal/stepgen for
// the tag's grammar). step_gen.go is generated from them: the hash's view
// of a step (stepDef), the decoder of a stored step, the walks that put a
// step in normal form and intern its types, and the comparison of two
// versions of a step. TestStepGenUpToDate fails when it is stale.
//
// To add a field to a step:
//
//  1. declare it in Step with its json and graph tags, and run go generate
//     in lang/graph (a value of a new Go type also needs that type's
//     decoder, normal form and comparison, named as the tag says);
//  2. have the front end (package lang) set it;
//  3. if some values of it are not valid, say so in encode_validate.go.
//
// A field that holds an expression (an *Expr or a *Value) has a fourth
// place: the walk of expr.Load (lang/expr/evalload.go), which indexes the
// expressions of a stored graph under the scope they were checked in.
//
// A def field changes the graph hash of every workflow whose steps set it
// (spec/golden/graph_hashes.txt pins them): leave it out of the encoding
// when it holds its zero value (omitempty), so that the graphs stored
// before it keep their hashes.
package graph

//go:generate go run ./internal/stepgen/cmd
