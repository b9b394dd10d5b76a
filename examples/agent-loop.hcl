# agent-loop: improve a draft round by round until a critic's score reaches
# a target. bin/refine stands in for a model call: it reads the draft on
# stdin and prints {"draft", "score", "round"}. Each round is one until
# iteration, recorded durably: a crash in round 3 resumes in round 3.
#
#   flowrun apply examples/agent-loop.hcl
#   flowrun apply examples/agent-loop.hcl --input target=0.5
#   flowrun apply examples/agent-loop.hcl --input target=2   # never reached

workflow "agent-loop" {
  version     = "1.0.0"
  description = "Refine a draft until its score reaches the target."

  input "topic" {
    type    = string
    default = "Why workflows should be durable"
  }
  input "target" {
    type    = number
    default = 0.75
  }

  step "refine" {
    # Checked after every iteration; steps.refine is the latest one.
    until          = "steps.refine.output.json.score >= input.target"
    max_iterations = 6
    interval       = "200ms"
    # Exhausting max_iterations fails the step with kind until_exhausted;
    # continue so that the next step can report it.
    on_error = "continue"
    timeout  = "30s"
    retry {
      attempts = 3 # per iteration: a flaky model call does not end the loop
      backoff  = "1s"
    }
    exec {
      command = ["./bin/refine"]
      # In the action, iteration counts from 0 and steps.refine is the
      # previous iteration (absent in iteration 0, hence the guard).
      stdin = "{{ iteration == 0 ? input.topic : steps.refine.output.json.draft }}"
      env   = { ROUND = "{{ iteration + 1 }}" }
    }
  }

  step "result" {
    set {
      converged = "{{ steps.refine.status == 'completed' }}"
      rounds    = "{{ steps.refine.output.json.round }}"
      score     = "{{ steps.refine.output.json.score }}"
      draft     = "{{ steps.refine.output.json.draft }}"
    }
  }

  output "converged" { value = "{{ steps.result.output.converged }}" }
  output "rounds" { value = "{{ steps.result.output.rounds }}" }
  output "draft" { value = "{{ steps.result.output.draft }}" }
}
