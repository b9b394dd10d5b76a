# pipeline: a fan-out data pipeline.
#   list       an exec prints a JSON array of batch names
#   process    foreach batch, 4 at a time; a batch that still fails after its
#              retries goes to the dead-letter queue instead of failing the run
#   aggregate  a set step computes results from the item outputs (pure CEL)
#   total      an exec sums the row counts it gets as JSON on stdin
#
#   flowrun apply examples/pipeline.hcl
#   flowrun dlq list                  # batch-05 is there, with its error
#   flowrun dlq retry ID              # after fixing the data: run it again

workflow "pipeline" {
  version     = "1.1.0"
  description = "Process batches in parallel; dead-letter the bad ones."

  input "batches" {
    type    = number
    default = 8
  }

  limits {
    parallel = 8 # steps and items of one run in flight at once
  }

  step "list" {
    exec { command = ["./bin/gen-batches", "{{ input.batches }}"] }
  }

  # stdout that is JSON is parsed into output.json, so items is a list.
  step "process" {
    foreach {
      items       = "steps.list.output.json"
      concurrency = 4
      on_failure  = "dead_letter"
    }
    timeout = "1m"
    retry {
      attempts = 3
      backoff  = "500ms"
      # exit 3 means bad data: retrying cannot help, dead-letter it at once.
      when = "!(has(error.exit_code) && error.exit_code == 3)"
    }
    exec {
      command  = ["./bin/process-batch", "{{ item }}"]
      pass_env = ["BAD_BATCH"] # the batch the script rejects, when the worker sets it
    }
  }

  # A foreach step's output is the list of item outputs in index order; a
  # dead-lettered item's slot is null. A template that is exactly one
  # {{ expr }} keeps its type: these are a list, a number and a list.
  step "aggregate" {
    set {
      processed     = "{{ steps.process.output.filter(o, o != null).map(o, o.json.batch) }}"
      dead_lettered = "{{ steps.process.output.filter(o, o == null).size() }}"
      row_counts    = "{{ steps.process.output.filter(o, o != null).map(o, o.json.rows) }}"
    }
  }

  # stdin is text; a list inside a text template is rendered as compact
  # JSON, so this sends "[350,624,...]" and a newline.
  step "total" {
    exec {
      command = ["./bin/sum-rows"]
      stdin   = "{{ steps.aggregate.output.row_counts }}\n"
    }
  }

  output "processed" { value = "{{ steps.aggregate.output.processed }}" }
  output "dead_lettered" { value = "{{ steps.aggregate.output.dead_lettered }}" }
  output "total_rows" { value = "{{ steps.total.output.json.total }}" }
}
