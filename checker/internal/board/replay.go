package board

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gokata/checker/internal/room"
)

// replay reads the room's file into the grid, line by line. A line that
// is not a grade of this room is skipped with a log line naming it. A last
// line without its newline was cut short by a crash: it is cut off the
// file (it was never acknowledged), unless it holds a whole grade, which
// is kept and given its newline. Either way the file then ends at a line
// end, ready for appends.
func (s *Server) replay(f *os.File) error {
	name := filepath.Base(f.Name())
	r := bufio.NewReader(f)
	var good int64 // offset just after the last whole line
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(line) == 0 {
			break
		}
		torn := line[len(line)-1] != '\n'
		c, isControl, cerr := room.ParseControl(bytes.TrimSpace(line))
		gr, perr := s.replayed(bytes.TrimSpace(line))
		if isControl {
			perr = cerr
		}
		switch {
		case torn && perr != nil:
			fmt.Fprintf(s.cfg.Log, "warning: %s: line %d was cut short when the server stopped; skipped it (it was never acknowledged)\n", name, n)
			if err := f.Truncate(good); err != nil {
				return err
			}
		case torn:
			if _, err := f.WriteAt([]byte("\n"), good+int64(len(line))); err != nil {
				return err
			}
		case perr != nil && len(bytes.TrimSpace(line)) > 0:
			fmt.Fprintf(s.cfg.Log, "warning: %s: line %d skipped: %v\n", name, n, perr)
		}
		if torn && perr != nil {
			break
		}
		if perr == nil && isControl {
			s.grid.Apply(c)
			s.changed()
		} else if perr == nil {
			s.lim.stored[key(gr.Participant)] += int64(len(line))
			s.kept(gr)
		}
		good += int64(len(line))
		if torn {
			break
		}
	}
	end, err := f.Seek(0, io.SeekEnd)
	s.lim.size = end
	return err
}

// replayed checks one stored line as a push is checked against the
// catalog (a name that looks like another was refused when pushed).
func (s *Server) replayed(line []byte) (room.Grade, error) {
	gr, err := room.ParseGrade(line)
	if err != nil {
		return gr, err
	}
	return s.checkGrade(gr)
}
