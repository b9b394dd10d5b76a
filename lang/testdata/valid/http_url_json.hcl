# A list or map in a url is placed as its JSON text, escaped where it
# stands: in the path as one segment, in the query as a value. In the host
# or port it is a compile error (invalid/http_url.hcl).
workflow "http_url_json" {
  version = "1.0.0"
  input "id" { type = string }

  step "object_in_path_and_query" {
    http { url = "https://api.example.com/{{ input }}?ids={{ [input.id] }}" }
  }
}
