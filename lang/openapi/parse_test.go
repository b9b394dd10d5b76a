package openapi

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func mustParse(t *testing.T, src []byte) *Document {
	t.Helper()
	doc, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return doc
}

// op finds an operation by its operationId.
func op(t *testing.T, doc *Document, id string) (*Path, *Operation) {
	t.Helper()
	for _, p := range doc.Paths {
		for _, o := range p.Item.Operations {
			if o.OperationID == id {
				return p, o
			}
		}
	}
	t.Fatalf("no operation %s", id)
	return nil, nil
}

// The petstore document reads into the model: servers with their
// variables, paths in order, parameters of the path item and of the
// operation, references of every kind resolved (to one object each, and a
// recursive schema to a cycle), YAML anchors and merge keys followed.
func TestParsePetstore(t *testing.T) {
	doc := mustParse(t, readTestdata(t, "petstore.yaml"))
	if doc.Version != "3.0.3" || len(doc.Servers) != 2 {
		t.Fatalf("version %q, %d servers", doc.Version, len(doc.Servers))
	}
	s := doc.Servers[0]
	if s.URL != "https://{region}.pets.example/{base}" || s.Variables["region"].Default != "eu" ||
		!reflect.DeepEqual(s.Variables["region"].Enum, []string{"eu", "us"}) || s.Variables["base"].Default != "v1" {
		t.Errorf("server 0: %+v", s)
	}
	var templates []string
	for _, p := range doc.Paths {
		templates = append(templates, p.Template)
	}
	if strings.Join(templates, " ") != "/pets /pets/{petId}" {
		t.Errorf("paths %v", templates)
	}

	pets, list := op(t, doc, "listPets")
	if list.Method != "GET" || len(pets.Item.Operations) != 2 || pets.Item.Operations[1].Method != "POST" {
		t.Errorf("/pets operations: %+v", pets.Item.Operations)
	}
	if len(list.Parameters) != 2 {
		t.Fatalf("listPets parameters: %+v", list.Parameters)
	}
	limit, status := list.Parameters[0], list.Parameters[1]
	if limit.Name != "limit" || limit.In != InQuery || limit.Required || !limit.Schema.Is("integer") || limit.Schema.Format != "int32" {
		t.Errorf("limit: %+v %+v", limit, limit.Schema)
	}
	if status.Name != "status" || !reflect.DeepEqual(status.Schema.Enum, []any{"available", "pending", "sold"}) {
		t.Errorf("status (a reference): %+v", status)
	}
	page := list.Responses["200"].Content["application/json"].Schema
	if !page.Is("array") || page.Items == nil {
		t.Fatalf("200: %+v", page)
	}
	pet := page.Items
	if len(pet.AllOf) != 2 || !pet.AllOf[0].Is("object") || pet.AllOf[0].Properties["id"].Format != "int64" {
		t.Fatalf("Pet: %+v", pet)
	}
	own := pet.AllOf[1]
	if own.Properties["parent"] != pet {
		t.Error("Pet.parent is not Pet itself")
	}
	if own.AdditionalProperties == nil || *own.AdditionalProperties || own.AdditionalSchema != nil {
		t.Errorf("additionalProperties false: %v %v", own.AdditionalProperties, own.AdditionalSchema)
	}
	if !own.Properties["tag"].Nullable || !reflect.DeepEqual(own.Properties["weight"].Enum, []any{1.0, 2.5}) {
		t.Errorf("tag %+v weight %+v", own.Properties["tag"], own.Properties["weight"])
	}
	if k := own.Properties["kind"]; len(k.OneOf) != 2 || len(k.AnyOf) != 1 || len(k.AnyOf[0].Type) != 0 {
		t.Errorf("kind: %+v", k)
	}
	errSchema := list.Responses["default"].Content["application/json"].Schema
	if errSchema.AdditionalSchema == nil || !errSchema.AdditionalSchema.Is("string") || errSchema.AdditionalProperties != nil {
		t.Errorf("Error response: %+v", errSchema)
	}

	_, create := op(t, doc, "createPets")
	if create.RequestBody == nil || create.RequestBody.Required || create.RequestBody.Content["application/json"].Schema != pet {
		t.Errorf("createPets body: %+v", create.RequestBody)
	}
	if r, ok := create.Responses["201"]; !ok || len(r.Content) != 0 {
		t.Errorf("createPets responses (an unquoted code): %+v", create.Responses)
	}

	item, show := op(t, doc, "showPetById")
	if len(item.Item.Parameters) != 1 || item.Item.Parameters[0].In != InPath || !item.Item.Parameters[0].Required {
		t.Errorf("path item parameters: %+v", item.Item.Parameters)
	}
	if show.Responses["200"].Content["application/json"].Schema != pet {
		t.Error("a reference into paths (escaped ~1 and %7B) did not reach Pet")
	}
	_, update := op(t, doc, "updatePet")
	if h := update.Parameters[0]; h.In != InHeader || h.Schema != nil || !h.Content["text/plain"].Schema.Is("string") {
		t.Errorf("X-Trace: %+v", h)
	}
	if !update.RequestBody.Required {
		t.Error("updatePet body not required")
	}
}

// An OpenAPI 3.1 document, as JSON: type lists with null, boolean
// schemas, $defs, webhooks, no paths needed, unknown keywords allowed.
func TestParse31JSON(t *testing.T) {
	doc := mustParse(t, []byte(`{
  "openapi": "3.1.0",
  "info": {"title": "T", "summary": "3.1 has it", "version": "1"},
  "webhooks": {"ping": {"post": {"requestBody": {"content": {"application/json": {}}}}}},
  "components": {"schemas": {
    "Node": {"type": ["object", "null"], "x-any": 1, "vendorKeyword": true,
      "properties": {"next": {"$ref": "#/components/schemas/Node"}, "any": true, "none": false,
        "tags": {"type": "array"}, "ref": {"$ref": "#/components/schemas/Node/$defs/Leaf"}},
      "$defs": {"Leaf": {"type": "string", "const": "x"}}, "exclusiveMinimum": 0}
  }}
}`))
	if doc.Version != "3.1.0" || len(doc.Paths) != 0 {
		t.Fatalf("%+v", doc)
	}
	node := mustParse(t, []byte(`{"openapi": "3.1.1", "info": {"title": "T", "version": "1"}, "paths": {"/n": {"get": {"operationId": "n"}}},
  "components": {"schemas": {"Node": {"type": ["object", "null"], "properties": {"next": {"$ref": "#/components/schemas/Node"}, "any": true}}}}}`))
	if o := node.Paths[0].Item.Operations[0]; o.OperationID != "n" || o.Responses != nil {
		t.Errorf("an operation without responses (3.1): %+v", o)
	}
}

// Each mistake is reported with where it is.
func TestParseErrors(t *testing.T) {
	const head = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\n"
	const ok = "responses: {'200': {description: OK}}"
	param := func(p string) string {
		return head + "paths:\n  /a:\n    get:\n      parameters:\n        - " + p + "\n      " + ok + "\n"
	}
	schema := func(s string) string {
		return head + "paths: {}\ncomponents:\n  schemas:\n    S: " + s + "\n"
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "", "the document is empty"},
		{"not yaml", "openapi: [", "line 1: did not find expected node content"},
		{"a list", "[1, 2]", "line 1: the document must be an object with the fields openapi, info and paths, not a list"},
		{"no version", "info: {title: T, version: '1'}\npaths: {}\n", "openapi (line 1): the document does not say its OpenAPI version: add it, like openapi: 3.0.3"},
		{"swagger", "swagger: '2.0'\ninfo: {title: T, version: '1'}\n", "swagger (line 1): this is a Swagger 2.0 document; flowrun reads OpenAPI 3.0 and 3.1 documents: convert it to OpenAPI 3"},
		{"version a number", "openapi: 3.0\n", `openapi (line 1): must be a string, like "3.0.3", not the number 3.0`},
		{"version 3.2", "openapi: 3.2.0\n", `openapi (line 1): flowrun reads OpenAPI 3.0.x and 3.1.x documents, not "3.2.0"`},
		{"version without patch", "openapi: '3.1'\n", `openapi (line 1): the version is major.minor.patch: write it in full, like "3.1.0"`},
		{"version 2", "openapi: '2.0'\n", `openapi (line 1): flowrun reads OpenAPI 3.0.x and 3.1.x documents, not "2.0"`},
		{"no info", "openapi: 3.0.3\npaths: {}\n", "info (line 1): the document has no info: add one, like info: {title: Pets, version: \"1.0\"}"},
		{"no title", "openapi: 3.0.3\ninfo: {version: '1'}\npaths: {}\n", "info.title (line 2): info has no title: add it, like title: Pets"},
		{"version unquoted", "openapi: 3.0.3\ninfo: {title: T, version: 1.0}\npaths: {}\n", `info.version (line 2): must be a string, not the number 1.0; put it in quotes, like "1.0"`},
		{"no version in info", "openapi: 3.0.3\ninfo: {title: T}\npaths: {}\n", `info.version (line 2): info has no version: add it, like version: "1.0"`},
		{"summary in 3.0", "openapi: 3.0.3\ninfo: {title: T, version: '1', summary: s}\npaths: {}\n", `info.summary (line 2): info has no field "summary"`},
		{"no paths", head, "paths (line 1): the document has no paths: add them, like paths: {/pets: {get: ...}}"},
		{"unknown top field", head + "path: {}\n", `path (line 3): the document has no field "path" (did you mean "paths"?)`},
		{"key twice", head + "paths: {}\npaths: {}\n", `paths (line 4): the key "paths" appears twice`},
		{"path without slash", head + "paths: {pets: {}}\n", "paths.pets (line 3): a path must start with /, like /pets"},
		{"paths alike", head + "paths: {'/a/{x}': {}, '/a/{y}': {}}\n", "paths./a/{y} (line 3): the path /a/{y} is the same as /a/{x} but for its parameters' names, so a request cannot tell them apart"},
		{"no responses", head + "paths: {/a: {get: {operationId: a}}}\n", `paths./a.get.responses (line 3): an operation needs its responses, like responses: {"200": {description: OK}}`},
		{"empty responses", head + "paths: {/a: {get: {responses: {}}}}\n", `paths./a.get.responses (line 3): an operation needs at least one response, like "200": {description: OK}`},
		{"response code", head + "paths: {/a: {get: {responses: {'20': {description: x}}}}}\n", `paths./a.get.responses.20 (line 3): a response is keyed by its status code, like "200" or "2XX", or is default, not "20"`},
		{"no description", head + "paths: {/a: {get: {responses: {'200': {}}}}}\n", "paths./a.get.responses.200.description (line 3): a response needs a description, like description: OK"},
		{"misspelt field", head + "paths: {/a: {get: {operationID: a, " + ok + "}}}\n", `paths./a.get.operationID (line 3): an operation has no field "operationID" (did you mean "operationId"?)`},
		{"duplicate operationId", head + "paths:\n  /a: {get: {operationId: x, " + ok + "}}\n  /b: {put: {operationId: x, " + ok + "}}\n", `paths./b.put.operationId (line 5): the operationId "x" is also GET /a's: each operation's must be its own`},
		{"template not declared", head + "paths: {'/a/{id}': {get: {" + ok + "}}}\n", `paths./a/{id}.get (line 3): the path has the parameter {id}, but the operation declares no parameter "id" in path: add one, like {name: id, in: path, required: true, schema: {type: string}}`},
		{"path parameter not in template", param("{name: id, in: path, required: true, schema: {type: string}}"), `paths./a.get (line 4): the operation declares the parameter "id" in path, but the path /a has no {id}`},
		{"path parameter not required", head + "paths: {'/a/{id}': {get: {parameters: [{name: id, in: path, schema: {type: string}}], " + ok + "}}}\n", `paths./a/{id}.get.parameters[0] (line 3): the path parameter "id" must say required: true (a path parameter is always sent)`},
		{"in body", param("{name: a, in: body, schema: {type: string}}"), `paths./a.get.parameters[0].in (line 7): a parameter is in path, query, header or cookie, not "body"`},
		{"no in", param("{name: a, schema: {type: string}}"), `paths./a.get.parameters[0].in (line 7): the parameter "a" does not say where it is sent: add in: path, query, header or cookie`},
		{"no name", param("{in: query, schema: {type: string}}"), `paths./a.get.parameters[0].name (line 7): a parameter needs a name`},
		{"neither schema nor content", param("{name: a, in: query}"), `paths./a.get.parameters[0] (line 7): the parameter "a" needs exactly one of schema and content`},
		{"both schema and content", param("{name: a, in: query, schema: {}, content: {text/plain: {}}}"), `paths./a.get.parameters[0] (line 7): the parameter "a" needs exactly one of schema and content`},
		{"content of two", param("{name: a, in: query, content: {text/plain: {}, application/json: {}}}"), `paths./a.get.parameters[0].content (line 7): the content of a parameter has exactly one media type`},
		{"required a string", param(`{name: a, in: query, required: "yes", schema: {type: string}}`), `paths./a.get.parameters[0].required (line 7): must be true or false, not the string "yes"`},
		{"parameter twice", head + "paths:\n  /a:\n    get:\n      parameters:\n        - {name: a, in: query, schema: {}}\n        - {name: a, in: query, schema: {}}\n      " + ok + "\n", `paths./a.get.parameters[1] (line 8): the parameter "a" in query is declared twice`},
		{"parameters an object", head + "paths: {/a: {get: {parameters: {a: 1}, " + ok + "}}}\n", "paths./a.get.parameters (line 3): must be a list, not an object"},
		{"body without content", head + "paths: {/a: {post: {requestBody: {required: true}, " + ok + "}}}\n", "paths./a.post.requestBody.content (line 3): a request body needs its content, like content: {application/json: {schema: {type: object}}}"},
		{"unknown type", schema("{type: strin}"), `components.schemas.S.type (line 6): "strin" is not a type (did you mean "string"?); a schema's type is one of array, boolean, integer, number, object, string`},
		{"null type in 3.0", schema("{type: 'null'}"), "components.schemas.S.type (line 6): the type null is OpenAPI 3.1's; in a 3.0 document, write nullable: true"},
		{"type list in 3.0", schema("{type: [string, integer]}"), "components.schemas.S.type (line 6): must be a string, not a list"},
		{"array without items", schema("{type: array}"), "components.schemas.S (line 6): a schema of type array needs items, like items: {type: string}"},
		{"required not a list", schema("{type: object, required: yes}"), `components.schemas.S.required (line 6): must be a list, not the string "yes"`},
		{"required twice", schema("{type: object, required: [a, a]}"), `components.schemas.S.required[1] (line 6): the property "a" is listed twice`},
		{"maxLength a string", schema("{type: string, maxLength: x}"), `components.schemas.S.maxLength (line 6): must be a whole number (0 or more), not the string "x"`},
		{"3.1 keyword in 3.0", schema("{const: 1}"), `components.schemas.S.const (line 6): a schema has no field "const"; it is a keyword of OpenAPI 3.1, so declare openapi: 3.1.0 to use it`},
		{"unknown keyword in 3.0", schema("{type: string, bogus: 1}"), `components.schemas.S.bogus (line 6): a schema has no field "bogus"`},
		{"boolean schema in 3.0", schema("{properties: {a: true}}"), "components.schemas.S.properties.a (line 6): must be an object, not true"},
		{"property without schema", schema("{properties: {a: }}"), `components.schemas.S.properties.a (line 6): "a" needs a schema`},
		{"additionalProperties a string", schema("{additionalProperties: no}"), `components.schemas.S.additionalProperties (line 6): must be true, false or an object, not the string "no"`},
		{"unresolvable ref", schema("{$ref: '#/components/schemas/T'}"), `components.schemas.S.$ref (line 6): "#/components/schemas/T" names nothing: the document has no components.schemas.T`},
		{"external ref", schema("{$ref: 'common.yaml#/Pet'}"), `components.schemas.S.$ref (line 6): "common.yaml#/Pet" names another document; flowrun reads one document and follows only references inside it, like "#/components/schemas/Pet": copy what it names into this document`},
		{"anchor ref", schema("{$ref: '#Pet'}"), `components.schemas.S.$ref (line 6): "#Pet" is not a reference into this document, like "#/components/schemas/Pet"`},
		{"ref not a string", schema("{$ref: 1}"), "components.schemas.S.$ref (line 6): must be a string, not the number 1"},
		{"ref cycle", head + "paths: {}\ncomponents:\n  schemas:\n    A: {$ref: '#/components/schemas/B'}\n    B: {$ref: '#/components/schemas/A'}\n",
			`components.schemas.A.$ref (line 6): the references #/components/schemas/B → #/components/schemas/A → #/components/schemas/B go round in a circle; a reference must end at an object`},
		{"ref to a list", schema("{$ref: '#/servers'}") + "servers: []\n", "servers (line 7): must be an object, not a list"},
		{"ref index out of range", schema("{$ref: '#/servers/3'}") + "servers: []\n", `components.schemas.S.$ref (line 6): "#/servers/3" names nothing: the document has no servers[3]`},
		{"unresolvable parameter ref", param("$ref: '#/components/parameters/P'"), `paths./a.get.parameters[0].$ref (line 7): "#/components/parameters/P" names nothing: the document has no components.parameters.P`},
		{"server without url", head + "paths: {}\nservers: [{description: x}]\n", "servers[0].url (line 4): a server needs a url, like url: https://api.example.com/v1"},
		{"server variable undeclared", head + "paths: {}\nservers: [{url: 'https://{host}/'}]\n", "servers[0].url (line 4): the server URL uses the variable {host}, which its variables do not declare"},
		{"server variable unused", head + "paths: {}\nservers: [{url: 'https://a/', variables: {v: {default: x}}}]\n", `servers[0].variables.v (line 4): the server URL "https://a/" does not use the variable {v}`},
		{"server variable without default", head + "paths: {}\nservers: [{url: 'https://{v}/', variables: {v: {enum: [a]}}}]\n", "servers[0].variables.v.default (line 4): a server variable needs a default, like default: v1"},
		{"component name", head + "paths: {}\ncomponents:\n  schemas:\n    Pet Name: {}\n", `components.schemas.Pet Name (line 6): "Pet Name" is not a component name: a name holds only letters, digits, '.', '-' and '_'`},
		{"merge of a scalar", head + "paths: {}\nx-one: &x 1\ncomponents: {schemas: {S: {<<: *x}}}\n", "components.schemas.S (line 5): a merge key (<<) merges mappings only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			if err.Error() != tc.want {
				t.Fatalf("error\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

// A JSON document is read as JSON: the escape \/ and tab indentation,
// which YAML parsers refuse, are fine, and its mistakes have lines. A
// document in YAML's flow style, which starts like JSON, is read as YAML.
func TestParseJSON(t *testing.T) {
	doc := mustParse(t, []byte("\ufeff{\n\t\"openapi\": \"3.0.3\",\n\t\"info\": {\"title\": \"a\\/b \\ud83d\\ude00\", \"version\": \"1\"},\n"+
		"\t\"paths\": {\"\\/a\": {\"get\": {\"operationId\": \"a\", \"responses\": {\"200\": {\"description\": \"ok\",\n"+
		"\t\t\"content\": {\"application\\/json\": {\"schema\": {\"type\": \"integer\", \"enum\": [1, 2.5e0, null, true, {\"a\": [\"b\"]}]}}}}}}}}\n}\n"))
	s := doc.Paths[0].Item.Operations[0].Responses["200"].Content["application/json"].Schema
	if doc.Paths[0].Template != "/a" || !s.Is("integer") || !reflect.DeepEqual(s.Enum, []any{1.0, 2.5, nil, true, map[string]any{"a": []any{"b"}}}) {
		t.Fatalf("paths %+v, schema %+v", doc.Paths[0], s)
	}
	if _, err := Parse([]byte(`{openapi: 3.0.3, info: {title: T, version: "1"}, paths: {}}`)); err != nil {
		t.Fatalf("YAML flow style: %v", err)
	}
	for _, tc := range []struct{ doc, want string }{
		{"{\n\"openapi\": \"3.0.3\",\n\"info\": {\"title\": 1}}", `info.title (line 3): must be a string, not the number 1; put it in quotes, like "1"`},
		{"{\"openapi\": \"3.0.3\",\n\"openapi\": \"3.0.3\"}", `openapi (line 2): the key "openapi" appears twice`},
		{"{\"openapi\": \"3.0.3\",\n\n\"info\": {\"title\": \"x\" \"version\": \"1\"}}", "line 3: invalid character '\"' after object key:value pair"},
		{"{\"openapi\": \"3.0.3\"}\n{}", "line 2: the document holds more than one JSON value"},
		{strings.Repeat("[", maxJSONDepth+1), "line 1: the document nests more than 10000 deep"},
	} {
		if _, err := Parse([]byte(tc.doc)); err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.doc, err, tc.want)
		}
	}
}

// A hostile document cannot make Parse spin or overflow: anchors that
// expand exponentially, values nested deep, long chains of references,
// a schema that contains itself a thousand ways.
func TestParseBounds(t *testing.T) {
	const head = "openapi: 3.1.0\ninfo: {title: T, version: '1'}\n"
	var laughs strings.Builder
	laughs.WriteString(head + "x-a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&laughs, "x-a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	laughs.WriteString("components: {schemas: {S: {enum: *a11}}}\n")

	var chain strings.Builder
	chain.WriteString(head + "components:\n  schemas:\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&chain, "    S%d: {$ref: '#/components/schemas/S%d'}\n", i, i+1)
	}
	chain.WriteString("    S100: {type: string}\n")

	var deepSchema strings.Builder // inline schemas nested 5000 deep: no recursion, so fine
	deepSchema.WriteString(head + "components: {schemas: {S: ")
	for i := 0; i < 5000; i++ {
		deepSchema.WriteString("{items: ")
	}
	deepSchema.WriteString("{}" + strings.Repeat("}", 5000) + "}}\n")

	var web strings.Builder // every schema refers to every other
	web.WriteString(head + "components:\n  schemas:\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&web, "    S%d:\n      properties:\n", i)
		for j := 0; j < 300; j++ {
			fmt.Fprintf(&web, "        p%d: {$ref: '#/components/schemas/S%d'}\n", j, j)
		}
	}

	for _, tc := range []struct{ name, doc, want string }{
		{"billion laughs", laughs.String(), "the document is too large to read once its anchors and references are expanded (more than 1048576 nodes)"},
		{"deep enum", head + "components: {schemas: {S: {enum: [" + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "]}}}\n", "the value nests more than 64 deep"},
		{"long chain", chain.String(), "more than 64 references lead one to the next"},
		{"deep schema", deepSchema.String(), ""},
		{"web of schemas", web.String(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
