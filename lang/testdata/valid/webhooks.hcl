workflow "deploy-hook" {
  version = "1.0.0"
  input "ref" { type = string }
  input "sha" { type = string }
  input "event" {
    type    = string
    default = "push"
  }
  secret "hook_key" { env = "HOOK_KEY" }

  webhook "push" {
    secret    = secret.hook_key
    signature = "x-hub-signature-256"
    inputs    = { ref = "{{ body.ref }}", sha = "{{ body.after }}", event = "{{ headers['x-github-event'] }}" }
    key       = "body.after"
  }

  webhook "manual" {
    secret = secret.hook_key
    inputs = { ref = "{{ body.ref }}", sha = "{{ string(body.n) }}" }
  }

  step "s" {
    exec { command = ["echo", "{{ input.ref }}", "{{ input.sha }}", "{{ input.event }}"] }
  }
}
