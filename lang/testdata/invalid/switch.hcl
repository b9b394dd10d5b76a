workflow "switch" {
  version = "1.0.0"
  input "fast" { type = bool }

  step "route" {
    switch {
      case {
        when = "input.fast"
        next = [step.fast, step.nowhere] # ERROR: Unknown step
      }
      default = [step.route] # ERROR: Switch targets itself
    }
  }

  step "route2" {
    switch {
      case {
        when = "!input.fast"
        next = [step.fast] # ERROR: Step chosen by two switches
      }
    }
  }

  step "route3" {
    switch {} # ERROR: Missing switch case
  }

  step "route4" {
    switch {
      case {
        when = "input.fast"
        next = "fast" # ERROR: Invalid reference list
      }
    }
  }

  step "fast" {
    set { x = 1 }
  }
}
