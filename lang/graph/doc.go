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
package graph
