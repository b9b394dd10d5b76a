package interp

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// workerEnviron is a worker's environment with secrets of its own and
// flowrun's configuration in it.
var workerEnviron = []string{
	"PATH=/usr/bin:/bin",
	"HOME=/home/worker",
	"USER=worker",
	"LANG=C.UTF-8",
	"LC_ALL=C",
	"LC_TIME=en_GB.UTF-8",
	"TZ=Europe/Paris",
	"TMPDIR=/var/tmp",
	"TOK=sekretvalue",
	"AWS_SECRET_ACCESS_KEY=abc",
	"FLOWRUN_DB=postgres://flowrun:hunter2@db/flowrun",
	"FLOWRUN_STEP=from-the-worker",
	"AWS_PROFILE=prod",
	"PATHX=not-path",
	"XLC_=not-locale",
	"NOEQUALS",
	"=nameless",
}

func TestWorkerEnvBaseOnly(t *testing.T) {
	got := workerEnv(workerEnviron, nil)
	want := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/worker", "USER=worker", "LANG=C.UTF-8", "LC_ALL=C",
		"LC_TIME=en_GB.UTF-8", "TZ=Europe/Paris", "TMPDIR=/var/tmp",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("workerEnv without pass_env =\n%q\nwant exactly the base list\n%q", got, want)
	}
}

func TestWorkerEnvPassEnv(t *testing.T) {
	// FLOWRUN_DB cannot be named in a compiled workflow; a graph that
	// names it anyway does not get it either.
	got := workerEnv(workerEnviron, []string{"AWS_PROFILE", "FLOWRUN_DB", "NOT_SET", "NOEQUALS"})
	if !slices.Contains(got, "AWS_PROFILE=prod") {
		t.Errorf("AWS_PROFILE, named in pass_env, is missing: %q", got)
	}
	for _, kv := range got {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "FLOWRUN_") || name == "TOK" || name == "AWS_SECRET_ACCESS_KEY" || name == "NOT_SET" || name == "NOEQUALS" {
			t.Errorf("workerEnv passes %q", kv)
		}
	}
	if len(got) != 9 {
		t.Errorf("workerEnv = %q, want the 8 base entries and AWS_PROFILE", got)
	}
}

func TestProgramEnvNeverNil(t *testing.T) {
	// A nil Env would give the program this process's whole environment.
	if env := programEnv(nil, nil); env == nil {
		t.Fatal("programEnv(nil, nil) is nil")
	}
	got := programEnv([]string{"A=worker"}, []string{"A=step", "FLOWRUN_STEP=s"})
	if want := []string{"A=worker", "A=step", "FLOWRUN_STEP=s"}; !slices.Equal(got, want) {
		t.Fatalf("programEnv = %q, want %q (the last entry of a name wins)", got, want)
	}
}

// TestExecEnvironmentDeclared runs programs that print their whole
// environment: each gets the base list, its workflow's and its own
// pass_env, its env and flowrun's variables, and nothing else of the
// worker's environment.
func TestExecEnvironmentDeclared(t *testing.T) {
	environ := slices.Clone(workerEnviron)
	environ[0] = "PATH=" + os.Getenv("PATH")
	b := setup(t, func(o *Options) { o.Environ = func() []string { return environ } })
	run := b.run(`workflow "envs" {
  version  = "1.0.0"
  pass_env = ["AWS_PROFILE"]
  step "own" {
    exec {
      command  = ["env"]
      pass_env = ["TOK"]
      env      = { LANG = "step-value", FLOWRUN_STEP = "step-value", EXTRA = "x" }
    }
  }
  step "shared" {
    exec { command = ["env"] }
  }
}`, nil)
	if run.Status != "completed" {
		t.Fatalf("run %s: %+v", run.Status, run.Error)
	}
	v := b.show(run.ID)
	base := map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": "/home/worker", "USER": "worker", "LANG": "C.UTF-8", "LC_ALL": "C",
		"LC_TIME": "en_GB.UTF-8", "TZ": "Europe/Paris", "TMPDIR": "/var/tmp", "AWS_PROFILE": "prod",
	}
	for step, extra := range map[string]map[string]string{
		"own":    {"TOK": "sekretvalue", "LANG": "step-value", "EXTRA": "x"},
		"shared": {},
	} {
		got := map[string]string{}
		var out struct{ Stdout string }
		if err := json.Unmarshal(v.Steps[step].Output, &out); err != nil {
			t.Fatalf("step %s: output %s: %v", step, v.Steps[step].Output, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(out.Stdout), "\n") {
			k, val, _ := strings.Cut(line, "=")
			got[k] = val
		}
		want := maps.Clone(base)
		maps.Copy(want, extra)
		for _, k := range []string{"FLOWRUN_IDEMPOTENCY_KEY", "FLOWRUN_RUN_ID", "FLOWRUN_STEP", "FLOWRUN_ATTEMPT", "FLOWRUN_OWNER"} {
			if got[k] == "" {
				t.Errorf("step %s: flowrun's %s is missing", step, k)
			}
			want[k] = got[k]
		}
		if got["FLOWRUN_STEP"] != step {
			t.Errorf("step %s: FLOWRUN_STEP = %q, want flowrun's value %q", step, got["FLOWRUN_STEP"], step)
		}
		if !maps.Equal(got, want) {
			t.Errorf("step %s: the program's environment is\n%v\nwant exactly\n%v", step, got, want)
		}
	}
}

// TestChildPassEnvIsItsOwn: a child workflow's programs take what the
// child's pass_env names, not its parent's.
func TestChildPassEnvIsItsOwn(t *testing.T) {
	environ := []string{"PATH=" + os.Getenv("PATH"), "AWS_PROFILE=prod", "KUBECONFIG=/k"}
	b := setup(t, func(o *Options) { o.Environ = func() []string { return environ } })
	b.compile(`
workflow "child" {
  version  = "1.0.0"
  pass_env = ["KUBECONFIG"]
  step "show" {
    exec { command = ["sh", "-c", "echo profile=$AWS_PROFILE kube=$KUBECONFIG"] }
  }
  output "said" { value = "{{ steps.show.output.stdout }}" }
}`)
	b.compile(`
workflow "parent" {
  version  = "1.0.0"
  pass_env = ["AWS_PROFILE"]
  step "kid" {
    workflow {
      name    = "child"
      version = "1"
    }
  }
  output "said" { value = "{{ steps.kid.output.said }}" }
}`)
	run := b.drive(b.start("parent", nil).ID)
	wantJSON(t, "outputs", run.Outputs, `{"said": "profile= kube=/k\n"}`)
}
