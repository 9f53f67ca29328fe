package board

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a size in bytes as a flag takes it: 512KiB, 64MiB, 1GiB
// or a number of bytes.
type ByteSize int64

// sizeUnits are the units a ByteSize is written in, the largest first.
var sizeUnits = []struct {
	suffix string
	shift  int
}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}}

// String is b in the largest unit that divides it: "64MiB".
func (b *ByteSize) String() string {
	for _, u := range sizeUnits {
		if *b >= 1<<u.shift && *b%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", *b>>u.shift, u.suffix)
		}
	}
	return fmt.Sprint(int64(*b))
}

// Set reads s, a size above zero and at most 1 TiB.
func (b *ByteSize) Set(s string) error {
	num, shift := s, 0
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, shift = n, u.shift
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > 1<<40>>shift {
		return errors.New("give a size above zero such as 64MiB, 512KiB or 1GiB")
	}
	*b = ByteSize(n << shift)
	return nil
}
