// Command irgen rewrites lang/graph/ir_gen.go from the //graph:gen types
// of lang/graph (run by go generate in lang/graph).
package main

import (
	"fmt"
	"os"

	"github.com/flowrun/flowrun/lang/graph/internal/irgen"
)

func main() {
	files, err := irgen.ReadDir(".")
	if err == nil {
		var out []byte
		if out, err = irgen.Generate(files); err == nil {
			err = os.WriteFile(irgen.Output, out, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
