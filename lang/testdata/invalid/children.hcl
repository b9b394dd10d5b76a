# Workflow steps checked against their child workflows (language.md §8.6):
# the child's inputs type the step's input object, its outputs the step's
# output.
workflow "parent" {
  version = "1.0.0"

  step "call" {
    workflow {
      name    = "restock"
      version = "1"
      input = { # ERROR: Missing child input
        skuu = "x" # ERROR: Unknown child input
        qty  = "many" # ERROR: Incorrect child input type
      }
    }
  }

  step "use" {
    set { v = "{{ steps.call.output.total + 1 }}" } # ERROR: Unknown field
  }

  step "typed" {
    when = "steps.call.output.count" # ERROR: Type mismatch
    set { v = 1 }
  }

  step "bare" {
    workflow {
      name    = "restock" # ERROR: Missing child input
      version = "1"
    }
  }

  step "newer" {
    workflow {
      name    = "restock" # ERROR: Unknown child workflow
      version = "2"
    }
  }
}

workflow "restock" {
  version = "1.2.0"
  input "sku" { type = string }
  input "qty" {
    type    = number
    default = 1
  }
  step "s" {
    set { n = 3 }
  }
  output "count" { value = "{{ steps.s.output.n }}" }
}
