workflow "blocks" {
  version = "1.0.0"

  defaults {
    retry { attempts = 2 }
    retry { attempts = 3 } # ERROR: Duplicate retry block
  }

  limits { attempts = 10 }
  limits { attempts = 20 } # ERROR: Duplicate limits block

  step "a" {
    foreach { items = "[1]" }
    foreach { items = "[2]" } # ERROR: Duplicate foreach block
    set { x = 1 }
  }

  step "b" extra { # ERROR: Extraneous label for step
    set { x = 1 }
  }

  step { # ERROR: Missing name for step
    set { x = 1 }
  }
}
