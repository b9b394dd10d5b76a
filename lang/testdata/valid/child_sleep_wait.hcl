workflow "parent" {
  version = "1.1.0"

  input "sku" { type = string }
  input "not_before" {
    type    = string
    default = "2030-01-01T00:00:00Z"
  }

  step "hold" {
    sleep { until = "{{ input.not_before }}" }
  }

  step "nap" {
    sleep { duration = "1d" }
  }

  step "approval" {
    depends_on = [step.hold, step.nap]
    wait {
      signal  = "approve.v1"
      timeout = "48h"
    }
  }

  step "reject" {
    when = "steps.approval.output.approved == false"
    fail { message = "rejected by {{ steps.approval.output.by }} at {{ steps.hold.output.woke_at }}" }
  }

  step "restock" {
    depends_on = [step.reject]
    workflow {
      name    = "restock"
      version = "1.2"
      input   = { sku = "{{ input.sku }}", count = 3 }
    }
  }

  output "child" { value = "{{ steps.restock.output }}" }
}

workflow "restock" {
  version = "1.2.7"
  input "sku" { type = string }
  input "count" {
    type    = number
    default = 1
  }

  step "order" {
    exec { command = ["order", "{{ input.sku }}", "{{ input.count }}"] }
  }
}
