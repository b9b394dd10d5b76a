# bench: the workflow of TestPostgresScaling (crashtest/pg_bench_test.go).
#
# Ten steps in a chain, five http and five set, each using the value before
# it. An http step calls the test's server (input "base"), which answers
# {"n": N+1} after a pause standing for an action's wait on something
# outside; a set step adds one. The output "v" is input n + 10.

workflow "bench" {
  version = "1.0.0"

  input "n" { type = number }
  input "base" { type = string }

  step "b01" {
    http { url = "{{ input.base }}/inc?n={{ int(input.n) }}" }
  }

  step "b02" {
    set { v = "{{ int(steps.b01.output.body.n) + 1 }}" }
  }

  step "b03" {
    http { url = "{{ input.base }}/inc?n={{ steps.b02.output.v }}" }
  }

  step "b04" {
    set { v = "{{ int(steps.b03.output.body.n) + 1 }}" }
  }

  step "b05" {
    http { url = "{{ input.base }}/inc?n={{ steps.b04.output.v }}" }
  }

  step "b06" {
    set { v = "{{ int(steps.b05.output.body.n) + 1 }}" }
  }

  step "b07" {
    http { url = "{{ input.base }}/inc?n={{ steps.b06.output.v }}" }
  }

  step "b08" {
    set { v = "{{ int(steps.b07.output.body.n) + 1 }}" }
  }

  step "b09" {
    http { url = "{{ input.base }}/inc?n={{ steps.b08.output.v }}" }
  }

  step "b10" {
    set { v = "{{ int(steps.b09.output.body.n) + 1 }}" }
  }

  output "v" { value = "{{ steps.b10.output.v }}" }
}
