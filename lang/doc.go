// Package lang owns the flowrun language: the HCL block schemas and their
// decoding with source ranges, the CEL environment and static type checking,
// {{ }} templates, the Graph IR with its canonical encoding and hashes, the
// version diff and bump classification, and formatting.
//
// lang must not do I/O beyond reading the files it is given, must not keep a
// goroutine running past the call that started it (a large file is decoded,
// compiled and sealed by several goroutines at once, each waited for before
// the call returns), and must not import interp or store: it turns source
// into an immutable Graph, and evaluates that Graph's expressions when asked.
package lang
