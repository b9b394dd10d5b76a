# pass_env names variables of the worker's environment: valid names only,
# and none of flowrun's own.
workflow "pass-env" {
  version  = "1.0.0"
  pass_env = ["AWS_PROFILE", "FLOWRUN_DB"] # ERROR: Reserved environment variable

  step "a" {
    exec {
      command  = ["true"]
      pass_env = ["KUBE-CONFIG"] # ERROR: Invalid environment variable name
    }
  }

  step "b" {
    exec {
      command  = ["true"]
      # ERROR: Invalid environment variable name
      # ERROR: Invalid environment variable name
      pass_env = ["", "1ST", "OK"]
    }
  }

  step "c" {
    exec {
      command  = ["true"]
      pass_env = "HOME" # ERROR: Incorrect value type
    }
  }

  step "d" {
    exec {
      command  = ["true"]
      # ERROR: Invalid environment variable name
      # ERROR: Incorrect value type
      pass_env = ["{{ input.x }}", 3]
    }
  }

  step "e" {
    exec {
      command  = ["true"]
      pass_env = [var] # ERROR: Reference not allowed
    }
  }

  alert "log" {
    on = ["failed"]
    exec {
      command  = ["logger", "x"]
      pass_env = ["FLOWRUN_STEP"] # ERROR: Reserved environment variable
    }
  }

  step "f" {
    http {
      url      = "http://example.com"
      pass_env = ["HOME"] # ERROR: Unsupported argument
    }
  }
}
