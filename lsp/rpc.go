package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// JSON-RPC 2.0 over a byte stream, framed as the Language Server Protocol
// says: header lines ("Content-Length: N"), a blank line, N bytes of JSON.

// Limits of the framing.
const (
	// DefaultMaxMessage is the largest message body read (Options.MaxMessage).
	DefaultMaxMessage = 64 << 20
	// maxHeaderBytes bounds the header lines of one message together.
	maxHeaderBytes = 8 << 10
)

// JSON-RPC error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	codeNotInitialized = -32002
	codeRequestFailed  = -32803
)

// message is a request, a notification or a response.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object; it is also the error handlers
// return to choose the code.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// errTooLarge is a message whose body is over the limit; it was skipped.
type errTooLarge struct{ size, limit int64 }

func (e *errTooLarge) Error() string {
	return fmt.Sprintf("a message of %d bytes is over the limit of %d bytes; it was skipped", e.size, e.limit)
}

// errHeader is a malformed header: the stream cannot be read further.
var errHeader = errors.New("malformed message header")

// readMessage reads one message body. A body over limit is read past (not
// kept) and reported as *errTooLarge, so that the next message can be
// read. io.EOF means the stream ended between messages.
func readMessage(r *bufio.Reader, limit int64) ([]byte, error) {
	length := int64(-1)
	total := 0
	seen := false // a header line was read
	for {
		line, err := r.ReadSlice('\n')
		total += len(line)
		if err == bufio.ErrBufferFull || total > maxHeaderBytes {
			return nil, fmt.Errorf("%w: header over %d bytes", errHeader, maxHeaderBytes)
		}
		if err != nil {
			if err == io.EOF && total == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading the message header: %w", err)
		}
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			if !seen {
				continue // blank lines between messages
			}
			break
		}
		seen = true
		name, value, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("%w: %q", errHeader, text)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: Content-Length %q", errHeader, strings.TrimSpace(value))
			}
			length = n
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("%w: no Content-Length", errHeader)
	}
	if length > limit {
		if _, err := io.CopyN(io.Discard, r, length); err != nil {
			return nil, fmt.Errorf("skipping a message of %d bytes: %w", length, err)
		}
		return nil, &errTooLarge{size: length, limit: limit}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading a message body of %d bytes: %w", length, err)
	}
	return body, nil
}

// writeMessage writes m with its header.
func writeMessage(w io.Writer, m *message) error {
	m.JSONRPC = "2.0"
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing a message: %w", err)
	}
	return nil
}
