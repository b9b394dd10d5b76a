package interp

import (
	"bytes"
	"context"
	"sort"
	"time"

	"github.com/flowrun/flowrun/store"
)

// OutputLine is one line of a step's live output (semantics.md, "Live
// output"), as OutputFollower reads it: the text without its newline,
// redacted, exactly as the program wrote it otherwise (print it through
// termtext).
type OutputLine struct {
	RunID   string
	StepKey string
	Attempt int
	Stream  string // store.StreamStdout or store.StreamStderr
	// At is when the chunk that ended the line was taken from the
	// program's stream.
	At   time.Time
	Text string
	// Seq is the store sequence number of the chunk that ended the line.
	Seq int64
	// Partial is set on a line that no newline ended (yet): the end of the
	// stream, or text given out by Flush.
	Partial bool
}

// MaxOutputLine is the longest line OutputFollower gives out: a longer
// run of text without a newline is given out in pieces of this size.
const MaxOutputLine = 16 << 10

// OutputFollower reads a run's live output in order and splits it into
// lines, for a reader that follows a run (logs -f, apply's live view,
// flowtui). It holds the end of each stream that no newline ended yet,
// until the newline comes or Flush gives it out. It is not safe for
// concurrent use.
type OutputFollower struct {
	st     OutputReader
	runID  string
	after  int64
	open   map[outputStream]*openLine
	filter func(stepKey string) bool
}

type outputStream struct {
	key     string
	attempt int
	stream  string
}

type openLine struct {
	text []byte
	at   time.Time
	seq  int64
}

// OutputReader reads a run's live output chunks: a store
// (store.OutputStore), or a server's records (api.Records).
type OutputReader interface {
	StepOutputChunks(ctx context.Context, runID string, afterSeq int64, limit int) ([]store.OutputChunk, error)
}

// NewOutputFollower follows the run's output from the start. keep, when
// not nil, says which step keys to read.
func NewOutputFollower(st OutputReader, runID string, keep func(stepKey string) bool) *OutputFollower {
	return &OutputFollower{st: st, runID: runID, open: map[outputStream]*openLine{}, filter: keep}
}

// Cursor is the sequence number of the last chunk read.
func (f *OutputFollower) Cursor() int64 { return f.after }

// outputPage is how many chunks Next reads per query.
const outputPage = 256

// Next reads the chunks stored since the last call and returns the lines
// they complete, in the order they were stored. A chunk of a later attempt
// of a step key gives out the earlier attempts' unended lines first
// (Partial).
func (f *OutputFollower) Next(ctx context.Context) ([]OutputLine, error) {
	var lines []OutputLine
	for {
		cs, err := f.st.StepOutputChunks(ctx, f.runID, f.after, outputPage)
		if err != nil {
			return lines, err
		}
		for _, c := range cs {
			f.after = c.Seq
			if f.filter != nil && !f.filter(c.StepKey) {
				continue
			}
			lines = f.add(lines, c)
		}
		if len(cs) < outputPage {
			return lines, nil
		}
	}
}

func (f *OutputFollower) add(lines []OutputLine, c store.OutputChunk) []OutputLine {
	k := outputStream{c.StepKey, c.Attempt, c.Stream}
	var ended []OutputLine
	for o := range f.open {
		if o.key == k.key && o.attempt < k.attempt {
			ended = append(ended, f.give(o, true))
		}
	}
	sort.Slice(ended, func(i, j int) bool { return ended[i].Seq < ended[j].Seq })
	lines = append(lines, ended...)
	ol := f.open[k]
	if ol == nil {
		ol = &openLine{}
		f.open[k] = ol
	}
	data := c.Data
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			ol.text = append(ol.text, data...)
			data = nil
		} else {
			ol.text = append(ol.text, data[:i]...)
			data = data[i+1:]
		}
		ol.at, ol.seq = c.At, c.Seq
		for len(ol.text) > MaxOutputLine {
			lines = append(lines, f.line(k, ol.text[:MaxOutputLine], ol, true))
			ol.text = ol.text[MaxOutputLine:]
		}
		if i >= 0 {
			lines = append(lines, f.line(k, ol.text, ol, false))
			ol.text = ol.text[:0]
		}
	}
	if len(ol.text) == 0 {
		delete(f.open, k)
	}
	return lines
}

func (f *OutputFollower) line(k outputStream, text []byte, ol *openLine, partial bool) OutputLine {
	return OutputLine{RunID: f.runID, StepKey: k.key, Attempt: k.attempt, Stream: k.stream, At: ol.at, Seq: ol.seq, Text: string(text), Partial: partial}
}

// give returns the unended line of a stream and forgets it.
func (f *OutputFollower) give(k outputStream, partial bool) OutputLine {
	ol := f.open[k]
	delete(f.open, k)
	return f.line(k, ol.text, ol, partial)
}

// Flush gives out the unended lines of the step key (of every step key
// when stepKey is ""), stored no later than upTo (any time when upTo is
// zero), as Partial lines in the order their text was stored: call it when
// the attempts writing them ended (an event of the key at upTo), or when
// the reader stops.
func (f *OutputFollower) Flush(stepKey string, upTo time.Time) []OutputLine {
	var lines []OutputLine
	for k, ol := range f.open {
		if (stepKey == "" || k.key == stepKey) && (upTo.IsZero() || !ol.at.After(upTo)) {
			lines = append(lines, f.give(k, true))
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].Seq < lines[j].Seq })
	return lines
}
