workflow "ship" {
  version = "2.0.0"
  step "build" {
    exec { command = ["./bin/build" } # ERROR: Missing item separator
  }
}
