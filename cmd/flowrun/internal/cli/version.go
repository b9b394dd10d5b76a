package cli

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

func versionCommand() *command {
	return &command{
		name:  "version",
		args:  "[--json]",
		short: "print flowrun's version, commit and Go version",
		long: `Version prints what this binary is, from the build information the Go
toolchain records in it: the module version (v1.2.3 when installed with
go install ...@v1.2.3, (devel) or a pseudo-version when built from a
checkout), the commit it was built from (with its time, and "modified" when
the work tree had changes), and the Go version and platform.
flowrun --version prints the same. --json prints one object with the fields
version, commit, commit_time, modified, go, os and arch.`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "print the version as one JSON object")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usageErrorf("version takes no arguments, got %q", args[0]).
						hint("Run: flowrun version")
				}
				info, _ := debug.ReadBuildInfo()
				v := buildVersion(info)
				if *asJSON {
					return e.writeJSON(v)
				}
				_, err := fmt.Fprint(e.stdout, v.text())
				return err
			}
		},
	}
}

// versionInfo is what `flowrun version` prints (spec/cli.md §2).
type versionInfo struct {
	Version    string  `json:"version"`
	Commit     *string `json:"commit"`      // null when the build recorded none
	CommitTime *string `json:"commit_time"` // RFC 3339, null when none
	Modified   bool    `json:"modified"`
	Go         string  `json:"go"`
	OS         string  `json:"os"`
	Arch       string  `json:"arch"`
}

// buildVersion reads a binary's build information: the main module's
// version and the vcs.* settings the go command stamps. A nil info (a
// binary built without module support) has version "unknown".
func buildVersion(info *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: "unknown", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if info == nil {
		return v
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		v.Go = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev := s.Value
			v.Commit = &rev
		case "vcs.time":
			t := s.Value
			v.CommitTime = &t
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "GOOS":
			v.OS = s.Value
		case "GOARCH":
			v.Arch = s.Value
		}
	}
	return v
}

// text is the version for people, three lines:
//
//	flowrun v1.2.3
//	commit 5f0c1e2d... (2026-11-26T10:00:00Z, modified)
//	go1.26.0 linux/amd64
func (v versionInfo) text() string {
	s := "flowrun " + v.Version + "\n"
	switch {
	case v.Commit != nil:
		s += "commit " + *v.Commit
		var notes []string
		if v.CommitTime != nil {
			notes = append(notes, *v.CommitTime)
		}
		if v.Modified {
			notes = append(notes, "modified")
		}
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, ", ") + ")"
		}
		s += "\n"
	default:
		s += "commit unknown (built without version control information)\n"
	}
	return s + v.Go + " " + v.OS + "/" + v.Arch + "\n"
}

// short is the version in one word, as a worker registers it: the module
// version, with the commit's first 12 digits when one is recorded (and
// "-modified" for a changed work tree): (devel)+5f0c1e2d9a3b-modified.
func (v versionInfo) short() string {
	s := v.Version
	if v.Commit != nil {
		c := *v.Commit
		s += "+" + c[:min(len(c), 12)]
		if v.Modified {
			s += "-modified"
		}
	}
	return s
}

// binaryVersion is this binary's short version.
func binaryVersion() string {
	info, _ := debug.ReadBuildInfo()
	return buildVersion(info).short()
}
