package room

import (
	"html/template"
	"io"
	"strings"
)

// HTML writes the grid as one self-contained page: inline style, no
// script, nothing fetched.
func (g *Grid) HTML(w io.Writer) error {
	return page.Execute(w, view{Grid: g, CSS: template.CSS(Stylesheet)})
}

// LivePage writes the grid as the live board's page: the same page, in
// large type, with the script at scriptPath that replaces the table
// with each new one the server sends (see Table).
func (g *Grid) LivePage(w io.Writer, scriptPath string) error {
	return page.Execute(w, view{Grid: g, CSS: template.CSS(Stylesheet), Script: scriptPath})
}

// Table writes the grid's table alone, as LivePage has it: the board
// sends it after each change.
func (g *Grid) Table(w io.Writer) error {
	return page.ExecuteTemplate(w, "table", view{Grid: g})
}

// view is what the templates read.
type view struct {
	*Grid
	CSS    template.CSS
	Script string // the live board's script; "" in a report
}

// Stylesheet is the page's style, inline in a <style> element (the board
// allows exactly it in its Content-Security-Policy, by its hash).
const Stylesheet = `
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem; color: #222; }
  h1 { font-size: 1.4rem; }
  table { border-collapse: collapse; }
  th, td { border: 1px solid #ccc; padding: .35rem .6rem; text-align: center; }
  th.participant, td.participant { text-align: left; }
  thead th { background: #f4f4f4; vertical-align: bottom; }
  thead th small { display: block; font-weight: normal; color: #666; max-width: 9rem; }
  td small { display: block; font-size: .8em; }
  td.pass { background: #d9f2d9; }
  td.partial { background: #fdf0c8; }
  td.started { background: #fbe0dc; }
  td.none { color: #aaa; }
  tfoot td { font-weight: bold; background: #f4f4f4; }
  p.legend { color: #555; }
  body.live { font-size: 24px; margin: 1rem; color: #000; background: #fff; }
  body.live h1 { font-size: 1.6rem; margin: 0 0 .5rem; }
  body.live th, body.live td { border: 2px solid #000; padding: .3rem .6rem; }
  body.live thead th small { color: #333; }
  body.live td.pass { background: #0a6b0a; color: #fff; }
  body.live td.partial { background: #ffd23f; color: #000; }
  body.live td.started { background: #c0392b; color: #fff; }
  body.live td.none { color: #777; }
  body.live p.legend { color: #000; }
  #status { font-size: .8em; }
`

var page = template.Must(template.New("room").Funcs(template.FuncMap{
	"short": func(slug string) string { // "06-retry" → "06"
		n, _, _ := strings.Cut(slug, "-")
		return n
	},
	"legend": func() string { return Legend },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Room · {{len .Rows}} participants</title>
<style>{{.CSS}}</style>
{{- if .Script}}
<script src="{{.Script}}" defer></script>
{{- end}}
</head>
<body{{if .Script}} class="live"{{end}}>
<h1>Room · {{len .Rows}} participants · {{len .Katas}} katas</h1>
{{- if .Script}}
<p id="status">connecting…</p>
{{- end}}
{{template "table" .}}
<p class="legend">{{legend}}</p>
</body>
</html>
{{define "table"}}<table id="room">
<thead>
<tr><th class="participant">participant</th>{{range .Katas}}<th data-kata="{{.Slug}}" title="{{.Title}}">{{short .Slug}}<small>{{.Title}}</small></th>{{end}}<th>passed</th></tr>
</thead>
<tbody>
{{range $r := .Rows}}<tr data-participant="{{$r.Participant}}"><td class="participant">{{$r.Participant}}</td>{{range $k := $.Katas}}{{$c := index $r.Cells $k.Slug}}<td class="{{$c.State}}" data-kata="{{$k.Slug}}"{{with $c.Where}} title="{{$c.Stuck}}: {{$c.StuckText}}"{{end}}>{{$c.Text}}{{with $c.Where}}<small>{{.}}</small>{{end}}</td>{{end}}<td>{{$r.Passed}}</td></tr>
{{end}}</tbody>
<tfoot>
<tr><td class="participant">passed by</td>{{range .Katas}}<td data-kata="{{.Slug}}">{{$.PassedBy .Slug}} of {{len $.Rows}}</td>{{end}}<td></td></tr>
</tfoot>
</table>{{end}}`))
