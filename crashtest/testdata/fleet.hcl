# fleet: the workflow of TestWorkersProof (crashtest/workers_test.go).
#
# Ten steps in a chain, six exec and four set. Each value is computed from
# the one before it, so the output "v" is a function of the input "n" alone
# that the test computes too: exec step i prints (v * 31 + i) % 1000003 after
# a sleep of 0.1 s, set step i computes (v * 7 + i) % 1000003. Each exec step
# appends "IDEMPOTENCY_KEY ATTEMPT start" and "... end" lines to the file
# $FLEET_LOG around its sleep, so the test can tell what ran.

workflow "fleet" {
  version  = "1.0.0"
  pass_env = ["FLEET_LOG"]

  input "n" { type = number }

  step "f01" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$FLEET_LOG\"; sleep 0.1; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$FLEET_LOG\"; echo $(( ($IN * 31 + 1) % 1000003 ))"
      env     = { IN = "{{ int(input.n) }}" }
    }
  }

  step "f02" {
    set { v = "{{ (int(steps.f01.output.json) * 7 + 2) % 1000003 }}" }
  }

  step "f03" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$FLEET_LOG\"; sleep 0.1; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$FLEET_LOG\"; echo $(( ($IN * 31 + 3) % 1000003 ))"
      env     = { IN = "{{ steps.f02.output.v }}" }
    }
  }

  step "f04" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$FLEET_LOG\"; sleep 0.1; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$FLEET_LOG\"; echo $(( ($IN * 31 + 4) % 1000003 ))"
      env     = { IN = "{{ int(steps.f03.output.json) }}" }
    }
  }

  step "f05" {
    set { v = "{{ (int(steps.f04.output.json) * 7 + 5) % 1000003 }}" }
  }

  step "f06" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$FLEET_LOG\"; sleep 0.1; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$FLEET_LOG\"; echo $(( ($IN * 31 + 6) % 1000003 ))"
      env     = { IN = "{{ steps.f05.output.v }}" }
    }
  }

  step "f07" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$FLEET_LOG\"; sleep 0.1; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$FLEET_LOG\"; echo $(( ($IN * 31 + 7) % 1000003 ))"
      env     = { IN = "{{ int(steps.f06.output.json) }}" }
    }
  }

  step "f08" {
    set { v = "{{ (int(steps.f07.output.json) * 7 + 8) % 1000003 }}" }
  }

  step "f09" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$FLEET_LOG\"; sleep 0.1; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$FLEET_LOG\"; echo $(( ($IN * 31 + 9) % 1000003 ))"
      env     = { IN = "{{ steps.f08.output.v }}" }
    }
  }

  step "f10" {
    set { v = "{{ (int(steps.f09.output.json) * 7 + 10) % 1000003 }}" }
  }

  output "v" { value = "{{ steps.f10.output.v }}" }
}
