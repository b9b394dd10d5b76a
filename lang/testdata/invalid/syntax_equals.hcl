workflow "syntax2" {
  version = "1.0.0"
  step "a" {
    set { x "no equals sign" } # ERROR: Argument definition required
  }
}
