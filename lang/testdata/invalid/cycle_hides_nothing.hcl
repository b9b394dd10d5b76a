# A dependency cycle does not hide the other mistakes of the workflow
# (language.md §16), and the references along the cycle are not reported
# again as unknown or invisible steps.
workflow "cycle_hides_nothing" {
  version = "1.0.0"
  input "order_id" { type = string }

  step "charge" {
    set { x = 1 }
  }

  step "build" {
    depends_on = [step.pack] # ERROR: Dependency cycle
    set {
      x = "{{ steps.test.output.x }}"
      y = "{{ input.ordr_id }}" # ERROR: Unknown input
    }
  }

  step "test" {
    when = "steps.build.status == 'completed'"
    set { x = 1 }
  }

  step "pack" {
    when = "steps.test.output.x + 'a' == ''" # ERROR: Type mismatch
    set { x = "{{ steps.build.output.y }}" }
  }

  step "ship" {
    when = "steps.chrge.status == 'completed'" # ERROR: Unknown step
    set { y = "{{ steps.pack.output.nope }}" } # ERROR: Unknown field
  }

  output "o" {
    value = "{{ steps.test.output.z }}" # ERROR: Unknown field
  }
}
