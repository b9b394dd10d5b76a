package openapi

// Document is a parsed OpenAPI document: the parts flowrun compiles
// against. Everything a $ref names is resolved: the model holds no
// reference, and a schema that contains itself points to itself.
type Document struct {
	// Version is the document's openapi field, like "3.0.3".
	Version string
	// Servers are the document's servers, in order.
	Servers []*Server
	// Paths are the document's paths, in document order.
	Paths []*Path
}

// Server is a server the API is served at.
type Server struct {
	// URL may hold {variables}, each one of Variables.
	URL       string
	Variables map[string]*ServerVariable
}

// ServerVariable is a variable of a server URL.
type ServerVariable struct {
	Default string
	Enum    []string
}

// Path is one entry of the document's paths.
type Path struct {
	// Template is the path, like /pets/{petId}.
	Template string
	// Item is its path item; two paths that reference the same path item
	// share it.
	Item *PathItem
}

// PathItem is the operations on one path.
type PathItem struct {
	// Parameters apply to every operation of the item.
	Parameters []*Parameter
	// Operations are in the order get, put, post, delete, options, head,
	// patch, trace.
	Operations []*Operation
}

// Operation is one operation of a path item.
type Operation struct {
	// Method is the HTTP method, upper case.
	Method      string
	OperationID string
	// Parameters override the path item's of the same name and place.
	Parameters  []*Parameter
	RequestBody *RequestBody // nil: the operation takes no body
	// Responses are by status code ("200", "2XX") or "default".
	Responses map[string]*Response
}

// The places a parameter is sent in.
const (
	InPath   = "path"
	InQuery  = "query"
	InHeader = "header"
	InCookie = "cookie"
)

// Parameter is a parameter of an operation.
type Parameter struct {
	Name string
	// In is InPath, InQuery, InHeader or InCookie.
	In       string
	Required bool
	// Exactly one of Schema and Content is set.
	Schema  *Schema
	Content map[string]*MediaType
}

// RequestBody is an operation's request body.
type RequestBody struct {
	Required bool
	// Content is by media type, like "application/json".
	Content map[string]*MediaType
}

// Response is one response of an operation.
type Response struct {
	// Content is by media type; empty when the response has no body.
	Content map[string]*MediaType
}

// MediaType is the body of one media type.
type MediaType struct {
	Schema *Schema // nil: the document does not say
}

// Schema is a JSON schema, with the keywords flowrun checks values
// against; the others are read, checked and dropped.
type Schema struct {
	// Type is the type names: one in OpenAPI 3.0; in 3.1 possibly several,
	// "null" among them. Empty: any type.
	Type []string
	// Format is the format, like "int64"; "" when none.
	Format string
	// Nullable is OpenAPI 3.0's nullable: the value may also be null.
	Nullable   bool
	Properties map[string]*Schema
	Required   []string
	Items      *Schema
	// AdditionalProperties is set when additionalProperties is a
	// boolean; AdditionalSchema when it is a schema.
	AdditionalProperties *bool
	AdditionalSchema     *Schema
	// Enum values are decoded JSON: nil, bool, float64, string, []any,
	// map[string]any.
	Enum                []any
	AllOf, OneOf, AnyOf []*Schema
}

// Is reports whether the schema's type is exactly the one type name.
func (s *Schema) Is(name string) bool { return len(s.Type) == 1 && s.Type[0] == name }

// Permits reports whether the schema's type allows the type name: it names
// no type, or names this one.
func (s *Schema) Permits(name string) bool {
	if len(s.Type) == 0 {
		return true
	}
	for _, t := range s.Type {
		if t == name {
			return true
		}
	}
	return false
}
