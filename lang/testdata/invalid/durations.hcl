workflow "durations" {
  version  = "1.0.0"
  deadline = "-1s" # ERROR: Invalid duration

  breaker "b" {
    failures = 1
    cooldown = "1y" # ERROR: Invalid duration
  }

  defaults {
    timeout = "5 minutes" # ERROR: Invalid duration
  }

  step "a" {
    timeout = "10" # ERROR: Invalid duration
    retry {
      backoff = 5 # ERROR: Incorrect value type
    }
    exec { command = ["true"] }
  }

  step "b" {
    until    = "steps.b.output.exit_code == 0"
    interval = "-5s" # ERROR: Invalid duration
    exec { command = ["true"] }
  }

  step "c" {
    sleep { duration = "" } # ERROR: Invalid duration
  }
}
