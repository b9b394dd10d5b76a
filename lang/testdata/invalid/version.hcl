workflow "no-version" { # ERROR: Missing version
  description = "the version is missing"

  step "s" {
    set { x = 1 }
  }
}

workflow "short-version" {
  version = "1.4" # ERROR: Invalid version

  step "s" {
    set { x = 1 }
  }
}

workflow "v-version" {
  version = "v1.0.0" # ERROR: Invalid version

  step "s" {
    set { x = 1 }
  }
}

workflow "number-version" {
  version = 1 # ERROR: Incorrect value type

  step "s" {
    set { x = 1 }
  }
}
