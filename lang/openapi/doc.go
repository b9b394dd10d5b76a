// Package openapi reads an OpenAPI 3.0.x or 3.1.x document, JSON or YAML,
// into the small model flowrun's openapi actions compile against
// (language.md §8.10): the servers, the paths with their operations, the
// operations' parameters, request bodies and responses, and the JSON
// schemas those use. Parse resolves the references inside the document
// (a recursive schema becomes a cycle of pointers) and checks what the
// OpenAPI specification requires of the parts it reads, each mistake
// reported with where it is, like paths./pets/{id}.get.parameters[0]
// (line 14).
//
// It must not do file or network I/O: bytes in, model out. It follows no
// reference to another document, keeps nothing between calls, and bounds
// the work a document may ask of it (its anchors and references expanded
// at most so often, its values nested at most so deep, no recursion on a
// schema's depth), so a hostile document cannot make it spin or overflow
// the stack. It must not import package lang, which imports it.
package openapi
