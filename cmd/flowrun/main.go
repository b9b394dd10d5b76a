// Command flowrun validates, formats, stores and runs flowrun workflows.
// Everything it does lives in package cli; main only hands over the
// arguments and the standard streams and exits with the code cli returns,
// having first put the process's secrets out of reach of the programs it
// starts (package confine).
package main

import (
	"os"

	"github.com/flowrun/flowrun/cmd/flowrun/internal/cli"
	"github.com/flowrun/flowrun/cmd/flowrun/internal/confine"
)

func main() {
	confine.Process()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
