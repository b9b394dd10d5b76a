workflow "no-version" { # ERROR: Missing required argument
  description = "the version is missing"
}

workflow "short-version" {
  version = "1.4" # ERROR: Invalid version
}

workflow "v-version" {
  version = "v1.0.0" # ERROR: Invalid version
}

workflow "number-version" {
  version = 1 # ERROR: Incorrect value type
}
