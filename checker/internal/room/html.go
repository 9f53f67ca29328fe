package room

import (
	"html/template"
	"io"
	"strings"
)

// HTML writes the grid as one self-contained page: inline style, no
// script, nothing fetched.
func (g *Grid) HTML(w io.Writer) error {
	return page.Execute(w, g)
}

var page = template.Must(template.New("room").Funcs(template.FuncMap{
	"short": func(slug string) string { // "06-retry" → "06"
		n, _, _ := strings.Cut(slug, "-")
		return n
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Room · {{len .Rows}} participants</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem; color: #222; }
  h1 { font-size: 1.4rem; }
  table { border-collapse: collapse; }
  th, td { border: 1px solid #ccc; padding: .35rem .6rem; text-align: center; }
  th.participant, td.participant { text-align: left; }
  thead th { background: #f4f4f4; vertical-align: bottom; }
  thead th small { display: block; font-weight: normal; color: #666; max-width: 9rem; }
  td.pass { background: #d9f2d9; }
  td.partial { background: #fdf0c8; }
  td.started { background: #fbe0dc; }
  td.none { color: #aaa; }
  tfoot td { font-weight: bold; background: #f4f4f4; }
  p.legend { color: #555; }
</style>
</head>
<body>
<h1>Room · {{len .Rows}} participants · {{len .Katas}} katas</h1>
<table id="room">
<thead>
<tr><th class="participant">participant</th>{{range .Katas}}<th data-kata="{{.Slug}}" title="{{.Title}}">{{short .Slug}}<small>{{.Title}}</small></th>{{end}}<th>passed</th></tr>
</thead>
<tbody>
{{range $r := .Rows}}<tr data-participant="{{$r.Participant}}"><td class="participant">{{$r.Participant}}</td>{{range $k := $.Katas}}{{$c := index $r.Cells $k.Slug}}<td class="{{$c.State}}" data-kata="{{$k.Slug}}">{{$c.Text}}</td>{{end}}<td>{{$r.Passed}}</td></tr>
{{end}}</tbody>
<tfoot>
<tr><td class="participant">passed by</td>{{range .Katas}}<td data-kata="{{.Slug}}">{{$.PassedBy .Slug}} of {{len $.Rows}}</td>{{end}}<td></td></tr>
</tfoot>
</table>
<p class="legend">✔ passed (+n: bonus follow-ups passed) · k/n: requirements passed so far · –: not graded</p>
</body>
</html>
`))
