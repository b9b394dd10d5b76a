workflow "syntax3" { # ERROR: Unclosed configuration block
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
