workflow "limits" {
  version = "1.0.0"

  concurrency {
    key   = "'all'"
    limit = 0 # ERROR: Value out of range
  }

  limits {
    attempts = 1.5 # ERROR: Incorrect value type
    parallel = 0 # ERROR: Value out of range
  }

  breaker "b" {
    failures = 0 # ERROR: Value out of range
    cooldown = "1s"
  }

  breaker "c" {
    failures = 2
    cooldown = "1s"
    on_open  = "skip" # ERROR: Invalid on_open
  }

  step "a" {
    retry {
      attempts   = 0 # ERROR: Value out of range
      multiplier = 0.5 # ERROR: Value out of range
    }
    foreach {
      items       = "[1]"
      concurrency = 0 # ERROR: Value out of range
    }
    exec { command = ["true"] }
  }

  step "b" {
    max_iterations = 3 # ERROR: Missing until
    interval       = "1s" # ERROR: Missing until
    set { x = 1 }
  }
}
