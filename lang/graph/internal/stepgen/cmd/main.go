// Command stepgen rewrites lang/graph/step_gen.go from graph.go (run by go
// generate in lang/graph).
package main

import (
	"fmt"
	"os"

	"github.com/flowrun/flowrun/lang/graph/internal/stepgen"
)

func main() {
	src, err := os.ReadFile("graph.go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "stepgen:", err)
		os.Exit(1)
	}
	out, err := stepgen.Generate(src)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile("step_gen.go", out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "stepgen:", err)
		os.Exit(1)
	}
}
