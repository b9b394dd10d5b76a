workflow "settings" {
  version = "1.0.0"
  input "n" {} # ERROR: Missing input type

  limits {
    attempts = 10
    parallel = 4
  }

  step "set_retry" {
    retry { attempts = 2 } # ERROR: Setting has no effect
    timeout = "1s" # ERROR: Setting has no effect
    set { x = 1 }
  }

  step "join_point" {
    on_error        = "continue" # ERROR: Setting has no effect
    idempotency_key = "k" # ERROR: Setting has no effect
  }

  step "waiting" {
    until = "true" # ERROR: Setting has no effect
    wait { signal = "go" }
  }

  step "control_template" {
    when = "{{ input.n > 1 }}" # ERROR: Template in a control attribute
    set {
      in = 1 # ERROR: Invalid set attribute name
    }
  }

  step "over_limits" {
    foreach {
      items       = "[1, 2]"
      concurrency = 8 # ERROR: Value out of range
    }
    retry {
      attempts  = 20 # ERROR: Value out of range
      backoff   = "10s"
      max_delay = "1s" # ERROR: Value out of range
    }
    exec { command = ["true"] }
  }
}

workflow "empty" { # ERROR: Workflow has no steps
  version = "1.0.0"
}
