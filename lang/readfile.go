package lang

import (
	"fmt"
	"io"
	"os"
)

// The most flowrun reads of a file it reads whole (language.md §1, README
// "Using it"), unless --max-file-size says otherwise: a workflow file, and an
// inputs file (--inputs). A file is refused before it is read whole, so
// /dev/zero or a runaway generator costs at most the limit.
const (
	DefaultMaxWorkflowFile = 4 << 20
	DefaultMaxInputsFile   = 16 << 20
)

// FileTooLargeError is a file over the size limit it was read with.
type FileTooLargeError struct {
	Name  string
	Limit int64
}

func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most flowrun reads of it", e.Name, SizeText(e.Limit))
}

// ReadFileMax reads the file name whole when it holds at most limit bytes,
// else returns a *FileTooLargeError having read at most limit+1 bytes (a
// regular file's size is checked before anything is read).
func ReadFileMax(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, &FileTooLargeError{Name: name, Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &FileTooLargeError{Name: name, Limit: limit}
	}
	return b, nil
}

// SizeText renders a byte count for people: "4 MiB", "1536 KiB", "100 bytes".
func SizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
