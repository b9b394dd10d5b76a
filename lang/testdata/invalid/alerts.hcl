workflow "alerts" {
  version = "1.0.0"

  step "s" {
    set { x = 1 }
  }

  alert "unknown-event" {
    on = ["failed", "crashed"] # ERROR: Unknown alert event
    exec { command = ["true"] }
  }

  alert "no-action" { # ERROR: Missing alert action
    on = ["failed"]
  }

  alert "two-actions" {
    on = ["timed_out"]
    exec { command = ["true"] }
    http { url = "http://example.com" } # ERROR: Multiple actions
  }

  alert "no-events" {
    on = [] # ERROR: Missing alert event
    exec { command = ["true"] }
  }

  alert "wrong-block" {
    on = ["failed"]
    set { x = 1 } # ERROR: Unsupported block type
  }
}
