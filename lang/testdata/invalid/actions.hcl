workflow "actions" {
  version = "1.0.0"

  step "two" {
    set { x = 1 }
    exec { command = ["true"] } # ERROR: Multiple actions
  }

  step "sleep_both" {
    sleep {
      duration = "1m"
      until    = "2030-01-01T00:00:00Z" # ERROR: Conflicting sleep arguments
    }
  }

  step "sleep_none" {
    sleep {} # ERROR: Missing sleep argument
  }

  step "string_command" {
    exec { command = "ls -l" } # ERROR: Command is a string
  }

  step "shell_list" {
    exec {
      shell   = true
      command = ["ls", "-l"] # ERROR: Shell command is a list
    }
  }

  step "bad_expect" {
    http {
      url    = "http://example.com"
      expect = [200, 99] # ERROR: Invalid status code
    }
  }

  step "bad_method" {
    http {
      method = "FETCH" # ERROR: Invalid method
      url    = "http://example.com"
    }
  }

  step "bad_pin" {
    workflow {
      name    = "child"
      version = "v1" # ERROR: Invalid version pin
    }
  }

  step "no_message" {
    fail {} # ERROR: Missing fail message
  }

  step "no_url" {
    http { method = "GET" } # ERROR: Missing required argument
  }
}
