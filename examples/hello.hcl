# hello: the smallest useful workflow. Three things happen:
#   1. a `set` step computes a value from an input (no side effect),
#   2. an `exec` step runs a program with that value as an argument,
#   3. an `output` publishes what the program printed.
#
#   flowrun apply examples/hello.hcl
#   flowrun apply examples/hello.hcl --input name=Ada

workflow "hello" {
  version     = "1.0.0"
  description = "Greets someone: a set, an exec and an output."

  input "name" {
    type    = string
    default = "world"
  }

  # Data attributes are templates: {{ }} holds a CEL expression.
  step "greeting" {
    set {
      text = "Hello, {{ input.name }}!"
    }
  }

  # Referencing steps.greeting makes this step depend on it; no depends_on
  # is needed. command is an argument list: no shell, no quoting problems.
  step "say" {
    exec {
      command = ["echo", "{{ steps.greeting.output.text }}"]
    }
  }

  # stdout ends with echo's newline; trim() (CEL strings extension) drops it.
  output "said" {
    value = "{{ steps.say.output.stdout.trim() }}"
  }
}
