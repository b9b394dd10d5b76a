workflow "enums" {
  version = "1.0.0"

  concurrency {
    key         = "'one'"
    on_conflict = "wait" # ERROR: Invalid on_conflict
  }

  step "a" {
    join     = "some" # ERROR: Invalid join
    on_error = "ignore" # ERROR: Invalid on_error
    foreach {
      items      = "[1, 2]"
      on_failure = "skip" # ERROR: Invalid on_failure
    }
    set { x = 1 }
  }
}
