# bench: the workflow of TestPostgresScaling (crashtest/pg_bench_test.go).
#
# Ten steps in a chain, five exec and five set, each using the value before
# it. An exec step sleeps $BENCH_SLEEP seconds (the worker's environment;
# the test sets it) to stand for an action's wait on something outside,
# then prints its input plus one; a set step adds one. The output "v" is
# input n + 10.

workflow "bench" {
  version = "1.0.0"

  input "n" { type = number }

  step "b01" {
    exec {
      shell   = true
      command = "sleep \"$BENCH_SLEEP\"; echo $(( $IN + 1 ))"
      env     = { IN = "{{ int(input.n) }}" }
    }
  }

  step "b02" {
    set { v = "{{ int(steps.b01.output.json) + 1 }}" }
  }

  step "b03" {
    exec {
      shell   = true
      command = "sleep \"$BENCH_SLEEP\"; echo $(( $IN + 1 ))"
      env     = { IN = "{{ steps.b02.output.v }}" }
    }
  }

  step "b04" {
    set { v = "{{ int(steps.b03.output.json) + 1 }}" }
  }

  step "b05" {
    exec {
      shell   = true
      command = "sleep \"$BENCH_SLEEP\"; echo $(( $IN + 1 ))"
      env     = { IN = "{{ steps.b04.output.v }}" }
    }
  }

  step "b06" {
    set { v = "{{ int(steps.b05.output.json) + 1 }}" }
  }

  step "b07" {
    exec {
      shell   = true
      command = "sleep \"$BENCH_SLEEP\"; echo $(( $IN + 1 ))"
      env     = { IN = "{{ steps.b06.output.v }}" }
    }
  }

  step "b08" {
    set { v = "{{ int(steps.b07.output.json) + 1 }}" }
  }

  step "b09" {
    exec {
      shell   = true
      command = "sleep \"$BENCH_SLEEP\"; echo $(( $IN + 1 ))"
      env     = { IN = "{{ steps.b08.output.v }}" }
    }
  }

  step "b10" {
    set { v = "{{ int(steps.b09.output.json) + 1 }}" }
  }

  output "v" { value = "{{ steps.b10.output.v }}" }
}
