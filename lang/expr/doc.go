// Package expr owns the CEL layer of the flowrun language: the CEL
// environment and its functions, the mapping between graph types and CEL
// types, the scopes an expression is checked in, {{ }} templates, the cost
// limits, and the evaluation of a graph's expressions at run time
// (Load, Program, Activation), URLs included.
//
// expr reads graphs (lang/graph) but must not import the front end (package
// lang), must not do I/O, and must not start goroutines.
package expr
