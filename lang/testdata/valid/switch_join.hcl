workflow "routing" {
  version = "3.2.1"

  input "tier" { type = string }

  step "route" {
    switch {
      case {
        when = "input.tier == 'gold'"
        next = [step.priority, step.notify]
      }
      case {
        when = "input.tier == 'silver'"
        next = [step.notify]
      }
      default = [step.standard]
    }
  }

  step "priority" {
    set { lane = "fast" }
  }

  step "notify" {
    exec { command = ["notify", "{{ input.tier }}"] }
  }

  step "standard" {
    set { lane = "slow" }
  }

  step "done" {
    depends_on = [step.priority, step.standard]
    join       = "any"
  }

  step "report" {
    depends_on = [step.done]
    set {
      branch = "{{ steps.route.output }}"
      lanes  = ["{{ steps.priority.status }}", "{{ steps.standard.status }}"]
    }
  }
}
