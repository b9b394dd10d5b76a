// Package lang owns the flowrun language: the HCL block schemas and their
// decoding with source ranges, the CEL environment and static type checking,
// {{ }} templates, the Graph IR with its canonical encoding and hashes, the
// version diff and bump classification, and formatting.
//
// lang must not do I/O beyond reading the files it is given, must not start
// goroutines, and must not import interp or store: it turns source into an
// immutable Graph, and evaluates that Graph's expressions when asked.
package lang
