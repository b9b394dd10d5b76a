# catch, structured fail, a race, compensate, http auth and emit in one
# workflow (language.md §8).
workflow "errors_as_values" {
  version = "1.0.0"
  input "api" { type = string }
  secret "token" { env = "API_TOKEN" }

  step "reserve" {
    exec { command = ["./bin/reserve"] }
    compensate {
      on_cancel = true
      timeout   = "30s"
      retry { attempts = 3 }
      exec { command = ["./bin/release", "{{ steps.reserve.output.stdout }}", "{{ error.kind }}"] }
    }
  }
  step "get" {
    depends_on = [step.reserve]
    http {
      url  = "{{ input.api }}/pets/1"
      auth { bearer = "{{ secrets.token }}" }
    }
    catch {
      when = "error.kind == 'http' && has(error.status) && error.status == 404"
      next = [step.create]
    }
    catch {
      next = [step.give_up]
    }
  }
  step "create" {
    set { note = "{{ steps.get.error.message }}" }
  }
  step "give_up" {
    fail {
      error  = "{{ steps.get.error }}"
      type   = "https://example.com/problems/pets"
      status = 502
      title  = "Pets unavailable"
    }
  }
  step "mirror_a" {
    depends_on = [step.reserve]
    on_error   = "continue"
    exec { command = ["./bin/fetch", "a"] }
  }
  step "mirror_b" {
    depends_on = [step.reserve]
    on_error   = "continue"
    exec { command = ["./bin/fetch", "b"] }
  }
  step "fastest" {
    join       = "first"
    depends_on = [step.mirror_a, step.mirror_b]
    emit {
      url     = "{{ input.api }}/events"
      type    = "com.example.mirror.won"
      subject = "{{ steps.mirror_a.status == 'completed' ? 'a' : 'b' }}"
      data    = { at = "{{ run.started_at }}" }
    }
  }
  output "event_id" { value = "{{ steps.fastest.output.event.id }}" }
}
