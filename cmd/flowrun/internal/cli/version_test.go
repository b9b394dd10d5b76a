package cli

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for _, c := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"go install of a release", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
				{Key: "vcs.revision", Value: "5f0c1e2d"}, {Key: "vcs.time", Value: "2026-11-26T10:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			"flowrun v1.2.3\ncommit 5f0c1e2d (2026-11-26T10:00:00Z)\ngo1.26.0 linux/arm64\n"},
		{"a checkout with changes", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			"flowrun (devel)\ncommit abc (modified)\ngo1.26.1 " + platform + "\n"},
		{"no version control", &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}},
			"flowrun (devel)\ncommit unknown (built without version control information)\ngo1.26.1 " + platform + "\n"},
		{"no build info", nil,
			"flowrun unknown\ncommit unknown (built without version control information)\n" + runtime.Version() + " " + platform + "\n"},
	} {
		if got := buildVersion(c.info).text(); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
	v := buildVersion(&debug.BuildInfo{Main: debug.Module{Version: "v1.0.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.time", Value: "2026-01-01T00:00:00Z"}}})
	if v.Commit == nil || *v.Commit != "abc" || v.CommitTime == nil || v.Modified {
		t.Errorf("buildVersion: %+v", v)
	}
}
