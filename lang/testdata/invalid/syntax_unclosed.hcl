workflow "syntax" {
  version = "1.0.0"
  step "a" {
    exec {
      command = ["ls", "-l"
      dir     = "/tmp" # ERROR: Missing item separator
    }
  }
}
