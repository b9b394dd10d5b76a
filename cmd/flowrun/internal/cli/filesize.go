package cli

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/lang"
)

// The verbs that read workflow files or an inputs file whole take
// --max-file-size: without it a workflow file may hold
// lang.DefaultMaxWorkflowFile bytes and an inputs file
// lang.DefaultMaxInputsFile; with it, both may hold what it says. A larger
// file is refused (exit 2) before it is read whole.

const maxFileSizeUsage = "the most bytes a workflow file or an --inputs file may hold, like 64MiB (default 4MiB for a workflow file, 16MiB for an inputs file)"

func (e *env) maxFileSizeFlag(fs *flag.FlagSet) {
	fs.Var((*sizeFlag)(&e.maxFileSize), "max-file-size", maxFileSizeUsage)
}

// workflowFileLimit and inputsFileLimit are the limits in force.
func (e *env) workflowFileLimit() int64 {
	if e.maxFileSize > 0 {
		return e.maxFileSize
	}
	return lang.DefaultMaxWorkflowFile
}

func (e *env) inputsFileLimit() int64 {
	if e.maxFileSize > 0 {
		return e.maxFileSize
	}
	return lang.DefaultMaxInputsFile
}

// sizeFlag is a byte count: digits, optionally followed by KiB, MiB or
// GiB (or K, M, G; B for bytes).
type sizeFlag int64

func (s *sizeFlag) String() string {
	if s == nil || *s == 0 {
		return ""
	}
	return strings.ReplaceAll(lang.SizeText(int64(*s)), " ", "")
}

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

var errSize = errors.New("give a size in bytes, like 8388608, or with a unit: 64KiB, 8MiB, 1GiB")

func parseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, errSize
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, errSize
	}
	var shift uint
	switch strings.ToLower(strings.TrimSpace(t[i:])) {
	case "", "b":
	case "k", "kib":
		shift = 10
	case "m", "mib":
		shift = 20
	case "g", "gib":
		shift = 30
	default:
		return 0, errSize
	}
	if n <= 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%s: the size must be above 0 and below 4 EiB", errSize)
	}
	return n << shift, nil
}
