workflow "bad" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
    catch { next = [step.b] } # ERROR: Catch on a step that cannot fail
  }
  step "b" {
    exec { command = ["true"] }
    catch { next = [step.b] } # ERROR: Catch targets its own step
  }
  step "c" {
    join       = "first" # ERROR: Race with one dependency
    depends_on = [step.b]
  }
  step "d" {
    fail { title = "t" } # ERROR: Missing fail message
  }
  step "e" {
    exec { command = ["true"] }
    compensate {} # ERROR: Missing compensation action
  }
  step "f" {
    compensate { # ERROR: Nothing to compensate
      exec { command = ["true"] }
    }
  }
  step "g" {
    http {
      url = "http://127.0.0.1:9/"
      auth {} # ERROR: Missing credentials
    }
  }
  step "h" {
    emit { url = "http://127.0.0.1:9/" } # ERROR: Missing required argument
  }
  step "i" {
    fail { error = "{{ steps.b.output }}" } # ERROR: Incorrect value type
  }
  step "j" {
    fail { error = "{{ steps.b.error }}" }
  }
}
