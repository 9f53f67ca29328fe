// The go.mod that builds the library adapters (solutions/NN-slug/testdata/
// libraries/*.go): checker verify grades them with go build -modfile
// pointing here, so the module path is the kata module's own. It holds the
// module's requirements plus the libraries, each at the newest release
// whose own go.mod allows the Go version the README promises (1.25):
// golang.org/x/sync v0.23.0 and x/time v0.16.0 on need Go 1.26. Edit it
// with go get -modfile tools/libraries/go.mod, never go mod tidy (tidy
// drops what only testdata uses).

module gokata

go 1.25.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/benbjohnson/clock v1.3.5
	github.com/rogpeppe/go-internal v1.16.0
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.3.0
	pgregory.net/rapid v1.3.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/failsafe-go/failsafe-go v0.9.8 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
	github.com/sourcegraph/conc v0.3.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/time v0.15.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
