# crash30: the workflow of TestCrashProof (crashtest/crash_test.go).
#
# 30 steps, 20 exec and 10 set: step sN reads the values of s(N-2) and
# s(N-3), so two steps are often in flight at once and every value depends on
# all the values before it: a step that ran on stale or missing data changes
# the outputs. Each exec step appends "IDEMPOTENCY_KEY ATTEMPT start" and
# "... end" lines to the file $CRASH_LOG around a sleep of 0.1 to 0.25 s, so
# the test can tell how often, and in which attempt, each step ran. The
# outputs and the step outputs never hold the run id or the attempt, so they
# are the same for every run.

workflow "crash30" {
  version  = "1.0.0"
  pass_env = ["CRASH_LOG"]

  input "seed" {
    type    = number
    default = 7
  }

  step "s01" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.15; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + 1) % 1000003 ))}\""
      env     = { IN = "{{ int(input.seed) }}" }
    }
  }

  step "s02" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.20; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + 2) % 1000003 ))}\""
      env     = { IN = "{{ int(input.seed) }}" }
    }
  }

  step "s03" {
    set {
      v = "{{ (int(steps.s01.output.json.v) * 7 + 3) % 1000003 }}"
    }
  }

  step "s04" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.14; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 4) % 1000003 ))}\""
      env     = { IN = "{{ int(steps.s02.output.json.v) }}", SIDE = "{{ int(steps.s01.output.json.v) }}" }
    }
  }

  step "s05" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.19; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 5) % 1000003 ))}\""
      env     = { IN = "{{ steps.s03.output.v }}", SIDE = "{{ int(steps.s02.output.json.v) }}" }
    }
  }

  step "s06" {
    set {
      v = "{{ (int(steps.s04.output.json.v) * 7 + steps.s03.output.v + 6) % 1000003 }}"
    }
  }

  step "s07" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.13; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 7) % 1000003 ))}\""
      env     = { IN = "{{ int(steps.s05.output.json.v) }}", SIDE = "{{ int(steps.s04.output.json.v) }}" }
    }
  }

  step "s08" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.18; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 8) % 1000003 ))}\""
      env     = { IN = "{{ steps.s06.output.v }}", SIDE = "{{ int(steps.s05.output.json.v) }}" }
    }
  }

  step "s09" {
    set {
      v = "{{ (int(steps.s07.output.json.v) * 7 + steps.s06.output.v + 9) % 1000003 }}"
    }
  }

  step "s10" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.12; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 10) % 1000003 ))}\""
      env     = { IN = "{{ int(steps.s08.output.json.v) }}", SIDE = "{{ int(steps.s07.output.json.v) }}" }
    }
  }

  step "s11" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.17; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 11) % 1000003 ))}\""
      env     = { IN = "{{ steps.s09.output.v }}", SIDE = "{{ int(steps.s08.output.json.v) }}" }
    }
  }

  step "s12" {
    set {
      v = "{{ (int(steps.s10.output.json.v) * 7 + steps.s09.output.v + 12) % 1000003 }}"
    }
  }

  step "s13" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.11; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 13) % 1000003 ))}\""
      env     = { IN = "{{ int(steps.s11.output.json.v) }}", SIDE = "{{ int(steps.s10.output.json.v) }}" }
    }
  }

  step "s14" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.16; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 14) % 1000003 ))}\""
      env     = { IN = "{{ steps.s12.output.v }}", SIDE = "{{ int(steps.s11.output.json.v) }}" }
    }
  }

  step "s15" {
    set {
      v = "{{ (int(steps.s13.output.json.v) * 7 + steps.s12.output.v + 15) % 1000003 }}"
    }
  }

  step "s16" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.10; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 16) % 1000003 ))}\""
      env     = { IN = "{{ int(steps.s14.output.json.v) }}", SIDE = "{{ int(steps.s13.output.json.v) }}" }
    }
  }

  step "s17" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.15; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 17) % 1000003 ))}\""
      env     = { IN = "{{ steps.s15.output.v }}", SIDE = "{{ int(steps.s14.output.json.v) }}" }
    }
  }

  step "s18" {
    set {
      v = "{{ (int(steps.s16.output.json.v) * 7 + steps.s15.output.v + 18) % 1000003 }}"
    }
  }

  step "s19" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.25; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 19) % 1000003 ))}\""
      env     = { IN = "{{ int(steps.s17.output.json.v) }}", SIDE = "{{ int(steps.s16.output.json.v) }}" }
    }
  }

  step "s20" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.14; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 20) % 1000003 ))}\""
      env     = { IN = "{{ steps.s18.output.v }}", SIDE = "{{ int(steps.s17.output.json.v) }}" }
    }
  }

  step "s21" {
    set {
      v = "{{ (int(steps.s19.output.json.v) * 7 + steps.s18.output.v + 21) % 1000003 }}"
    }
  }

  step "s22" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.24; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 22) % 1000003 ))}\""
      env     = { IN = "{{ int(steps.s20.output.json.v) }}", SIDE = "{{ int(steps.s19.output.json.v) }}" }
    }
  }

  step "s23" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.13; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 23) % 1000003 ))}\""
      env     = { IN = "{{ steps.s21.output.v }}", SIDE = "{{ int(steps.s20.output.json.v) }}" }
    }
  }

  step "s24" {
    set {
      v = "{{ (int(steps.s22.output.json.v) * 7 + steps.s21.output.v + 24) % 1000003 }}"
    }
  }

  step "s25" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.23; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 25) % 1000003 ))}\""
      env     = { IN = "{{ int(steps.s23.output.json.v) }}", SIDE = "{{ int(steps.s22.output.json.v) }}" }
    }
  }

  step "s26" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.12; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 26) % 1000003 ))}\""
      env     = { IN = "{{ steps.s24.output.v }}", SIDE = "{{ int(steps.s23.output.json.v) }}" }
    }
  }

  step "s27" {
    set {
      v = "{{ (int(steps.s25.output.json.v) * 7 + steps.s24.output.v + 27) % 1000003 }}"
    }
  }

  step "s28" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.22; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 28) % 1000003 ))}\""
      env     = { IN = "{{ int(steps.s26.output.json.v) }}", SIDE = "{{ int(steps.s25.output.json.v) }}" }
    }
  }

  step "s29" {
    exec {
      shell   = true
      command = "echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT start\" >> \"$CRASH_LOG\"; sleep 0.11; echo \"$FLOWRUN_IDEMPOTENCY_KEY $FLOWRUN_ATTEMPT end\" >> \"$CRASH_LOG\"; echo \"{\\\"v\\\": $(( ($IN * 31 + $SIDE + 29) % 1000003 ))}\""
      env     = { IN = "{{ steps.s27.output.v }}", SIDE = "{{ int(steps.s26.output.json.v) }}" }
    }
  }

  step "s30" {
    set {
      v = "{{ (int(steps.s28.output.json.v) * 7 + steps.s27.output.v + 30) % 1000003 }}"
    }
  }

  output "last" { value = "{{ steps.s30.output.v }}" }
  output "sets" { value = "{{ [steps.s03.output.v, steps.s06.output.v, steps.s09.output.v, steps.s12.output.v, steps.s15.output.v, steps.s18.output.v, steps.s21.output.v, steps.s24.output.v, steps.s27.output.v, steps.s30.output.v] }}" }
  output "s10" { value = "{{ steps.s10.output.stdout.trim() }}" }
}
