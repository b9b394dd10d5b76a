workflow "twice" {
  version = "1.0.0"

  step "s" {
    set { x = 1 }
  }
}

workflow "twice" { # ERROR: Duplicate workflow
  version = "1.1.0"

  step "s" {
    set { x = 1 }
  }
}
