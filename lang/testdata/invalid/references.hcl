workflow "references" {
  version = "1.0.0"
  input "order_id" { type = string }

  step "a" {
    depends_on = [step.nope] # ERROR: Unknown step
    set { x = 1 }
  }

  step "b" {
    depends_on = ["a"] # ERROR: Invalid reference
    breaker    = breaker.payments # ERROR: Unknown breaker
    exec { command = ["true"] }
  }

  step "c" {
    depends_on = [steps.a] # ERROR: Invalid reference
    set { x = 1 }
  }

  step "d" {
    when = "steps.missing.status == 'completed'" # ERROR: Unknown step
    set {
      x = "{{ input.ordr_id }}" # ERROR: Unknown input
    }
  }

  step "e" {
    set {
      y = "{{ steps.a.output.nope }}" # ERROR: Unknown field
    }
  }
}
