package bench

import (
	"fmt"
	"strings"
)

// The workflows of the scenarios, as HCL source: each is compiled with
// lang.LoadFile, as a file given to `flowrun apply` would be.

// setChain is a chain of n set steps, each after the last (depends_on).
// The values are literals: a set step with a template costs a CEL program
// per step, and lang.Load compiles those in time quadratic in the number of
// steps (see exprChain and the compile scenario), which would swamp what
// these chains measure, the engine.
func setChain(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %q {\n  version = \"1.0.0\"\n  limits {\n    parallel = 1\n    attempts = 1000000\n  }\n", name)
	b.WriteString("  step \"s0\" {\n    set { v = 0 }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    depends_on = [step.s%d]\n    set { v = %d }\n  }\n", i, i-1, i)
	}
	fmt.Fprintf(&b, "  output \"v\" { value = \"{{ steps.s%d.output.v }}\" }\n}\n", n-1)
	return b.String()
}

// exprChain is a chain of n set steps, each adding one to the last with a
// template: one CEL expression per step.
func exprChain(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %q {\n  version = \"1.0.0\"\n", name)
	b.WriteString("  step \"s0\" {\n    set { v = 0 }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    set { v = \"{{ steps.s%d.output.v + 1 }}\" }\n  }\n", i, i-1)
	}
	fmt.Fprintf(&b, "  output \"v\" { value = \"{{ steps.s%d.output.v }}\" }\n}\n", n-1)
	return b.String()
}

// execChain is a chain of n exec steps running true.
func execChain(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %q {\n  version = \"1.0.0\"\n  limits { attempts = %d }\n", name, n+10)
	b.WriteString("  step \"s0\" {\n    exec { command = [\"true\"] }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    depends_on = [step.s%d]\n    exec { command = [\"true\"] }\n  }\n", i, i-1)
	}
	b.WriteString("}\n")
	return b.String()
}

// fanOut is a foreach over the input list with a set body.
func fanOut(name string, concurrency int) string {
	return fmt.Sprintf(`workflow %[1]q {
  version = "1.0.0"
  input "items" { type = list(number) }
  limits {
    parallel = %[2]d
    attempts = 1000000
  }
  step "each" {
    foreach {
      items       = "input.items"
      concurrency = %[2]d
    }
    set { v = "{{ item * 2 }}" }
  }
  output "n" { value = "{{ size(steps.each.output) }}" }
}
`, name, concurrency)
}

// fanOutQuiet is fanOut with nothing reading the step's output.
func fanOutQuiet(name string, concurrency int) string {
	return fmt.Sprintf(`workflow %[1]q {
  version = "1.0.0"
  input "items" { type = list(number) }
  limits {
    parallel = %[2]d
    attempts = 1000000
  }
  step "each" {
    foreach {
      items       = "input.items"
      concurrency = %[2]d
    }
    set { v = "{{ item * 2 }}" }
  }
}
`, name, concurrency)
}

// resumable is a chain of n set steps, then a wait for the signal "go",
// then an exec step: the run parks after n completed steps, and its next
// step to start is "next".
func resumable(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %q {\n  version = \"1.0.0\"\n  limits { attempts = 1000000 }\n", name)
	b.WriteString("  step \"s0\" {\n    set { v = 0 }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    depends_on = [step.s%d]\n    set { v = %d }\n  }\n", i, i-1, i)
	}
	fmt.Fprintf(&b, "  step \"gate\" {\n    depends_on = [step.s%d]\n    wait { signal = \"go\" }\n  }\n", n-1)
	b.WriteString("  step \"next\" {\n    depends_on = [step.gate]\n    exec { command = [\"true\"] }\n  }\n}\n")
	return b.String()
}

// poller is one step that repeats an http GET until it has made n
// attempts: the graph and the output stay one step's, the history grows
// by one iteration and one attempt per round.
func poller(name, baseURL string, n int) string {
	return fmt.Sprintf(`workflow %q {
  version = "1.0.0"
  input "n" { type = number }
  limits { attempts = %d }
  step "poll" {
    until          = "steps.poll.output.body.i + 1 >= input.n"
    max_iterations = %d
    http { url = "%s/i/{{ iteration }}" }
  }
  output "last" { value = "{{ steps.poll.output.body.i }}" }
}
`, name, n+10, n+10, baseURL)
}

// threeSteps is the workflow of the apply scenario.
const threeSteps = `workflow "three" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
  }
  step "b" {
    set { v = "{{ steps.a.output.v + 1 }}" }
  }
  step "c" {
    set { v = "{{ steps.b.output.v + 1 }}" }
  }
  output "v" { value = "{{ steps.c.output.v }}" }
}
`
