workflow "unknown-names" {
  version    = "1.0.0"
  desciption = "a typo" # ERROR: Unsupported argument

  stpe "a" { # ERROR: Unsupported block type
  }

  step "b" {
    timout = "1s" # ERROR: Unsupported argument
    exec {
      command = ["true"]
      args    = ["x"] # ERROR: Unsupported argument
    }
    retry {
      attempt = 3 # ERROR: Unsupported argument
    }
  }

  step "c" {
    shell { # ERROR: Unsupported block type
    }
  }
}
