workflow "webhooks" {
  version = "1.0.0"
  input "ref" { type = string }
  input "n" {
    type    = number
    default = 1
  }
  secret "hook_key" { env = "HOOK_KEY" }

  step "s" {
    set { x = "{{ input.ref }}" }
  }

  webhook "unknown-secret" {
    secret = secret.hook_kye # ERROR: Unknown secret
    inputs = { ref = "x" }
  }

  webhook "quoted-secret" {
    secret = "hook_key" # ERROR: Invalid reference
    inputs = { ref = "x" }
  }

  webhook "no-secret" { # ERROR: Missing required argument
    inputs = { ref = "x" }
  }

  webhook "bad-header" {
    secret    = secret.hook_key
    signature = "X Sig" # ERROR: Invalid signature header
    inputs    = { ref = "x" }
  }

  webhook "unknown-input" {
    secret = secret.hook_key
    inputs = { ref = "{{ body.ref }}", rev = "y" } # ERROR: Unknown webhook input
  }

  webhook "wrong-type" {
    secret = secret.hook_key
    inputs = { ref = "x", n = "{{ headers['x-n'] }}" } # ERROR: Incorrect webhook input type
  }

  webhook "missing" {
    secret = secret.hook_key
    inputs = { n = 2 } # ERROR: Missing webhook input
  }

  webhook "no-inputs" { # ERROR: Missing webhook input
    secret = secret.hook_key
  }

  webhook "scope" {
    secret = secret.hook_key
    inputs = { ref = "{{ input.ref }}" } # ERROR: Variable not visible here
  }

  webhook "key-type" {
    secret = secret.hook_key
    inputs = { ref = "x" }
    key    = "size(headers)" # ERROR: Type mismatch
  }

  webhook "key-template" {
    secret = secret.hook_key
    inputs = { ref = "x" }
    key    = "{{ body.id }}" # ERROR: Template in a control attribute
  }

  webhook "bad name" { # ERROR: Invalid webhook name
    secret = secret.hook_key
    inputs = { ref = "x" }
  }

  webhook "dup" {
    secret = secret.hook_key
    inputs = { ref = "x" }
  }

  webhook "dup" { # ERROR: Duplicate webhook
    secret = secret.hook_key
    inputs = { ref = "x" }
  }

  step "t" {
    set { y = "{{ body.x }}" } # ERROR: Variable not visible here
  }
}
