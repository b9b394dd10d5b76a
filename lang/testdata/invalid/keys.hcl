workflow "keys" {
  version = "1.0.0"
  key     = "steps.a.output.x" # ERROR: Variable not visible here
  input "ids" { type = list(string) }

  concurrency {
    key = "run.id" # ERROR: Variable not visible here
  }

  step "a" {
    set { x = 1 }
  }
}

workflow "list-key" {
  version = "1.0.0"
  key     = "input.ids" # ERROR: Type mismatch
  input "ids" { type = list(string) }

  concurrency {
    key = "input.ids" # ERROR: Type mismatch
  }

  step "s" {
    set { x = 1 }
  }
}
